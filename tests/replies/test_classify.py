"""The classification engine against the labelled corpus in tests/data/replies/<label>/*.eml, plus fuzzing."""

import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replies import classify as c

CORPUS = Path(__file__).resolve().parents[1] / "data" / "replies"
FILES = sorted(CORPUS.glob("*/*.eml"))


def test_corpus_is_large_and_covers_every_label():
    assert len(FILES) >= 80
    labels = {p.parent.name for p in FILES}
    assert labels == set(c.LABELS)


def test_corpus_accuracy_at_least_95_percent(capsys):
    misses = []
    for path in FILES:
        verdict = c.classify(path.read_bytes())
        if verdict.label != path.parent.name:
            misses.append(f"{path.parent.name}/{path.name} -> {verdict.label} ({verdict.rule})")
    accuracy = 1 - len(misses) / len(FILES)
    with capsys.disabled():
        print(f"\nreply classification accuracy: {accuracy:.1%} on {len(FILES)} messages; misses: {misses}")
    assert accuracy >= 0.95, misses


@pytest.mark.parametrize("path", [p for p in FILES if p.parent.name == "bounce"], ids=lambda p: p.name)
def test_every_bounce_is_attributable(path):
    """A bounce names the failed recipient, or at least the returned message's Message-ID."""
    verdict = c.classify(path.read_bytes())
    assert verdict.bounced or verdict.returned_message_ids
    assert verdict.suppression_reason == "bounced"
    for mid in verdict.returned_message_ids:
        assert mid.startswith("<") and mid.endswith(">")


def _one(name: str) -> bytes:
    (path,) = [p for p in FILES if p.name.endswith(f"-{name}.eml")]
    return path.read_bytes()


def test_dsn_names_final_recipient_and_returned_message():
    v = c.classify(_one("postfix-user-unknown"))
    assert (v.label, v.rule, v.bounced) == ("bounce", "dsn_failed", ["jane@acme.com"])
    assert v.returned_message_ids == ["<msg-postfix-user-unknown@outreach-sbx.test>"]


def test_plain_text_bounces_from_exim_qmail_and_exchange():
    assert c.classify(_one("exim-plain-user-unknown")).bounced == ["ben@soylent.com"]
    assert c.classify(_one("qmail-no-mailbox")).bounced == ["walter@graymatter.com"]
    assert c.classify(_one("exchange-2010-plain")).bounced == ["olga@contoso-legacy.com"]
    v = c.classify(_one("generic-msgid-only"))
    assert v.label == "bounce" and v.bounced == []
    assert v.returned_message_ids == ["<msg-generic-msgid-only@outreach-sbx.test>"]


def test_delay_notices_and_read_receipts_stop_nobody():
    for name in ("postfix-delayed", "gmail-delay", "exchange-delay", "mdn-read-receipt", "outlook-read-receipt"):
        v = c.classify(_one(name))
        assert v.label == "other" and v.stops is False and v.suppression_reason is None, name


def test_bounce_wins_over_auto_submitted():
    v = c.classify(_one("gmail-address-not-found"))  # carries Auto-Submitted: auto-replied
    assert v.label == "bounce"


def test_suppression_reasons():
    assert c.classify(_one("en-remove-me")).suppression_reason == "unsubscribed"
    assert c.classify(_one("exchange-en")).suppression_reason == "replied"
    assert c.classify(_one("en-no-thanks")).suppression_reason == "replied"


def test_quoted_pitch_and_signature_do_not_count():
    # the quoted pitch asks "Would you be interested"; the signature says "To unsubscribe ..."
    assert c.classify(_one("en-no-thanks")).label == "not_interested"
    assert c.classify(_one("en-short-yes")).label == "interested"
    assert c.classify(_one("en-who-are-you")).label == "other"


def test_strip_quotes_and_signature():
    text = "Sounds good!\n\nBest,\nJane\nVP Sales\n\nOn Mon, Alex wrote:\n> are you interested?\n"
    assert c.strip_quotes_and_signature(text) == "Sounds good!"
    assert c.strip_quotes_and_signature("Hi\n-- \nunsubscribe at acme.com") == "Hi"
    assert c.strip_quotes_and_signature("Nein danke\n\nAm Mo., 1. Jan. schrieb Alex <a@b.c>:\n> x") == "Nein danke"


PITCH = "> Hi Jan,\n> We help teams book more meetings. Worth a quick call next week?\n> Alex\n"


@pytest.mark.parametrize("text,own", [
    # nothing above the quote header: no text of its own, unless an answer is written below or between the
    # quoted lines (after a blank line; an unquoted line right under a quoted one is a wrapped quote line)
    ("On Mon, Alex wrote:\n" + PITCH, ""),
    ("On Mon, Alex wrote:\n> Hi Jan,\n> Worth a call?\n\nYes, Thursday works.\n\n> Best,\n> Alex\n",
     "Yes, Thursday works."),
    ("On Mon, Alex wrote:\n> Hi Jan, we help teams book\nmore meetings. Worth a call?\n> Alex\n", ""),
    ("Am Mo. schrieb Alex <a@b.c>:\n> Hallo,\n> ein Gespräch?\n\nNein danke.\n\nGrüße\nJan Weber\n", "Nein danke."),
    ("On Mon, Alex wrote:\n> Worth a call?\n\nSure.\n\nOn Sun, Jan wrote:\n> older", "Sure."),
    ("<p></p>On Mon, Alex wrote:<blockquote>Worth a call?</blockquote><p>Sounds good</p>", "Sounds good"),
    ("Sent from my iPhone\n\nOn Mon, Alex wrote:\n> Worth a call?\n\nYes please.", "Yes please."),
    ("On Mon, Alex wrote:\n> Worth a call?\n\nThis e-mail and any attachments are confidential and intended "
     "solely for the addressee. If you received it in error, delete it.", ""),
    ("<p></p>On Mon, Alex wrote:<blockquote>Thanks<blockquote>Worth a call?</blockquote>Alex, Sales, book a "
     "call here</blockquote>", ""),
    # text under a forward separator or an Outlook header block is never read (it is not `>`-quoted)
    ("-----Original Message-----\n> Worth a call?\n\nLet's talk", ""),
    # a forward's history is not `>`-quoted: a forward without comment has no text of its own
    ("---------- Forwarded message ---------\nFrom: Alex\nSubject: x\n\nWorth a quick call next week?\n", ""),
    # an empty reply with only an automatic signature block (and at most a greeting) is empty
    ("Jan Kowalski\nHead of Operations | Acme\n+48 22 123 45 67\nwww.acme.example\n\nOn Mon, Alex wrote:\n" + PITCH,
     ""),
    ("Hi Alex,\n\nJan Kowalski\nHead of Operations | Acme\n+48 22 123 45 67", ""),
    ("山田太郎\n株式会社エービーシー 営業部\nTEL: 03-1234-5678", ""),
    # real signatures: lower-case titles, several contacts on one line, the company's legal footer
    ("Claire Dubois\nResponsable administrative et financière\nAtelier Verrier SAS\n"
     "Tél. : +33 4 72 18 44 90 | Port. : +33 6 12 48 77 03\n\nAtelier Verrier SAS au capital de 150 000 € - RCS Lyon",
     ""),
    ("Erik Lindqvist\nEkonomichef\nNordtrafik AB\nTel: +46 8 123 456 78 | Mobil: +46 70 123 45 67\n\n"
     "Nordtrafik AB | Org.nr 556123-4567", ""),
    ("田中 健一\n経理部 部長\nさくら商事株式会社\nTEL: 03-1234-5678 / 携帯: 090-1234-5678", ""),
    ("No thanks we have marketing covered\n+1 415 555 0100", "No thanks we have marketing covered\n+1 415 555 0100"),
    # under a sentence the block stays (the sentence may name whom to write to)
    ("Please write to:\nMaria Lopez\nmaria@acme.example", "Please write to:\nMaria Lopez\nmaria@acme.example"),
    ("Interested\nJan Kowalski\nwww.acme.example", "Interested\nJan Kowalski\nwww.acme.example"),
    # quote headers of other clients and languages, and their mobile footers
    ("結構です。\n\n2026年11月2日(月) 10:14 Alex Rivera <alex@out.example>:\n> 山田様\n", "結構です。"),
    ("いいですね。\n\n2026/11/02 10:14、Alex <alex@out.example>のメール:\n\n> 山田様\n", "いいですね。"),
    ("Nee bedankt\n\nOp 2 nov. 2026 om 10:14 heeft Alex <a@b.c> het volgende geschreven:\n> x", "Nee bedankt"),
    ("Nie, dziękuję.\n\nWiadomość napisana przez Alex <a@b.c> w dniu 02.11.2026, o godz. 10:14:\n\n> x",
     "Nie, dziękuję."),
    ("Não, obrigado.\n\nDe: Alex <a@b.c>\nEnviada em: segunda-feira, 2 de novembro de 2026 10:14\n\nOlá",
     "Não, obrigado."),
    ("Sí, hablemos.\n\nDe: Alex <a@b.c>\nEnviado el: lunes, 2 de noviembre de 2026 10:14\nPara: Jan\n\nHola Jan",
     "Sí, hablemos."),
    ("\n---------- Wiadomość przekazana dalej ---------\nOd: Alex <a@b.c>\nSubject: x\n\nDemo?", ""),
    ("-------- Forwarded Message --------\nSubject: x\n\nWorth a call?", ""),
    ("FYI\n\nInicio del mensaje reenviado:\n\nDe: Alex <a@b.c>\n\n¿Una demo?", "FYI"),
    ("Sounds good\n\nSent from Outlook for iOS", "Sounds good"),
    ("Nee bedankt\n\nVerstuurd vanaf mijn iPhone", "Nee bedankt"),
    # a sentence that mentions a number or an address is the reply, not a signature
    ("Call me on +1 415 555 0100 tomorrow", "Call me on +1 415 555 0100 tomorrow"),
    ("Please use info@acme.com for general requests.", "Please use info@acme.com for general requests."),
    ("我将于周一前休假。如有急事请联系王经理@acme.com。", "我将于周一前休假。如有急事请联系王经理@acme.com。"),
])
def test_own_text_under_quote_headers_and_signature_blocks(text, own):
    if text.startswith("<p>"):  # an HTML body: each blockquote is a quoted line once converted
        text = c.html_to_text(text)
    assert c.strip_quotes_and_signature(text) == own


@pytest.mark.parametrize("subject", ["RE: Conciliación automática de facturas", "R: Riconciliazione automatica",
                                     "Re: Quick question", "RV: Conciliación automática de facturas"])
def test_a_reply_with_no_text_of_its_own_is_other_whatever_the_subject(subject):
    """An empty reply or a forward without comment has no text for the model: its vote would come from the
    pitch's subject alone ("automática" reads like an auto-reply), so it never makes an absence notice."""
    for body in ("\n\nEl lun, 2 nov 2026 a las 10:14, Alex <a@b.c> escribió:\n> Hola Lucía,\n> ¿Una demo?\n",
                 "---------- Forwarded message ---------\nFrom: Alex <a@b.c>\nSubject: x\n\nHola, ¿una demo?\n",
                 "Sent from my iPhone\n"):
        v = c.classify(_mail(body, subject=subject))
        assert (v.label, v.rule) == ("other", "empty"), (subject, body)


@pytest.mark.parametrize("subject,body", [
    ("Læst: Quick question", "Din meddelelse blev læst mandag 2. november 2026 10:14."),
    ("Przeczytano: Quick question", "Wiadomość została przeczytana 2 listopada 2026."),
    ("Lida: Quick question", "Sua mensagem foi lida em 2 de novembro de 2026."),
    ("開封済み: Quick question", "メッセージは 2026/11/02 10:14 に開封されました。"),
    ("已读: Quick question", "您的邮件已被阅读。"),
])
def test_read_receipts_in_more_languages_stop_nobody(subject, body):
    v = c.classify(_mail(body, subject=subject))
    assert (v.label, v.rule, v.stops) == ("other", "read_receipt", False)


@pytest.mark.parametrize("text,label", [
    ("Not interested, thanks.", "not_interested"),
    ("Interested! When can we talk?", "interested"),
    ("please remove me", "unsubscribe"),
    ("Who are you?", "other"),
    ("", "other"),
])
def test_classify_text(text, label):
    assert c.classify_text(text).label == label


def test_snippet_is_new_text_only():
    msg = c.parse(_one("en-calendar"))
    s = c.snippet(msg)
    assert s.startswith("Hi Alex, Sounds good.") and "wrote:" not in s and len(s) <= c.SNIPPET_CHARS


def test_message_id_helpers():
    assert c.message_ids("<a@b> junk <c@d>") == ["<a@b>", "<c@d>"]
    assert c.normalize_message_id("  <x@y>  ") == "<x@y>"
    assert c.normalize_message_id("no-brackets@y") == "<no-brackets@y>"
    assert c.normalize_message_id("") == ""


# --- malformed MIME never crashes ------------------------------------------------------------------------
HEADER_NAMES = st.sampled_from([
    "From", "To", "Subject", "Content-Type", "Content-Transfer-Encoding", "Message-ID", "In-Reply-To",
    "References", "Auto-Submitted", "Return-Path", "Precedence", "X-Failed-Recipients", "Date",
])
HEADER_VALUES = st.one_of(
    st.text(max_size=80),
    st.sampled_from([
        "multipart/report; report-type=delivery-status; boundary=\"b\"", "multipart/mixed; boundary=",
        "message/delivery-status", "text/plain; charset=no-such-charset", "base64", "quoted-printable",
        "=?utf-8?b?!!!?=", "<<<@>>>", "MAILER-DAEMON@x", "auto-replied", "\udcff", "message/rfc822",
    ]),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_fuzz_random_bytes_never_crash(raw):
    v = c.classify(raw)
    assert v.label in c.LABELS
    c.snippet(c.parse(raw))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(HEADER_NAMES, HEADER_VALUES), max_size=8),
       st.lists(st.one_of(st.text(max_size=200), st.sampled_from([
           "--b", "--b--", "Content-Type: message/delivery-status", "Final-Recipient: rfc822;",
           "Action: failed", "Status: 5.1.1", "Content-Type: message/rfc822", "=ZZ", "\x00"])), max_size=12))
def test_fuzz_structured_mime_never_crashes(headers, body_lines):
    raw = "\r\n".join(f"{k}: {v}" for k, v in headers) + "\r\n\r\n" + "\r\n".join(body_lines)
    v = c.classify(raw.encode("utf-8", "surrogateescape"))
    assert v.label in c.LABELS
    c.snippet(c.parse(raw.encode("utf-8", "surrogateescape")))


@pytest.mark.parametrize("path", FILES[::7], ids=lambda p: p.name)
def test_truncated_corpus_messages_never_crash(path):
    raw = path.read_bytes()
    for cut in range(0, len(raw), max(1, len(raw) // 25)):
        assert c.classify(raw[:cut]).label in c.LABELS


def nested_multipart(depth: int, subject: str = "Out of office") -> bytes:
    raw = f"From: a@b.example\r\nSubject: {subject}\r\nContent-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n".encode()
    for i in range(1, depth):
        raw += b'--b%d\r\nContent-Type: multipart/mixed; boundary="b%d"\r\n\r\n' % (i - 1, i)
    return raw + b"--b%d\r\nContent-Type: text/plain\r\n\r\ninterested\r\n" % (depth - 1)


def test_mime_nested_past_the_parsers_recursion_limit_still_parses_its_headers():
    raw = nested_multipart(1000)  # the stdlib parser raises RecursionError on this
    msg = c.parse(raw)
    assert c.header(msg, "Subject") == "Out of office"
    assert c.classify(raw).label == "out_of_office"
    assert c.snippet(msg) == ""


def _mail(body: str, subject: str = "Re: Quick question", **headers) -> bytes:
    extra = "".join(f"{k.replace('_', '-')}: {v}\r\n" for k, v in headers.items())
    return (f"From: Jane <jane@acme.com>\r\nTo: alex@outreach-sbx.test\r\nSubject: {subject}\r\n"
            f"Message-ID: <x-{abs(hash(body))}@acme.com>\r\n{extra}"
            f"Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n").encode()


def test_ticket_acknowledgement_is_other_not_out_of_office():
    """Issue #16 fix 1: a help-desk acknowledgement (Auto-Submitted: auto-generated, no absence) is `other`."""
    raw = _mail("Thank you for contacting us. Your request (#48213) has been received and is being reviewed by "
                "our support staff.", subject="[Request received] Re: Quick question", Auto_Submitted="auto-generated")
    v = c.classify(raw)
    assert (v.label, v.rule) == ("other", "ticket_ack")
    raw = _mail("Your message was received by the Acme team.", Auto_Submitted="auto-generated")
    assert c.classify(raw).label == "other"
    raw = _mail("I am out of the office until Monday with limited access to email.", Auto_Submitted="auto-generated")
    assert c.classify(raw).label == "out_of_office"


@pytest.mark.parametrize("body,label", [
    ("I'm on holiday until Monday, but yes, this looks relevant: can we talk when I'm back?", "interested"),
    ("Ich bin bis Freitag im Urlaub, aber gerne: lassen Sie uns danach telefonieren.", "interested"),
    ("I'm out of the office this week. To answer quickly: we already use Salesloft, thanks.", "not_interested"),
])
def test_absence_sentence_in_a_persons_reply_keeps_the_intent(body, label):
    """Issue #16 fix 2: an absence sentence inside a reply a person wrote about the offer is not out_of_office."""
    assert c.classify(_mail(body, In_Reply_To="<msg-1@outreach-sbx.test>")).label == label


@pytest.mark.parametrize("body,label,lang", [
    ("ご提案ありがとうございます。来週デモを拝見したいです。", "interested", "ja"),
    ("谢谢，我们已经在用别的工具了，不需要。", "not_interested", "zh"),
    ("Nie jestem zainteresowany, proszę usunąć mnie z listy.", "unsubscribe", "pl"),
    ("Hej! Det lyder spændende, kan vi tage et møde torsdag?", "interested", "da"),
])
def test_local_model_reads_languages_the_rules_never_had(body, label, lang):
    v = c.classify(_mail(body, In_Reply_To="<msg-1@outreach-sbx.test>"))
    assert (v.label, v.language) == (label, lang)


def test_machine_mail_has_no_language():
    assert c.classify(_one("postfix-user-unknown")).language is None


def test_fast_scorer_gives_scikit_learns_scores():
    """The model's hand-rolled scorer (no per-call scikit-learn overhead) computes decision_function exactly."""
    import numpy as np

    from replies import model

    loaded = model.load()
    intent, language = model.scorers()
    for text in ("hi alex, we already use salesloft, thanks anyway", "ご提案ありがとうございます。", "", "ok!"):
        t = model.model_text(text)
        assert np.allclose(intent.scores(t), loaded["intent"].decision_function([t])[0])
        assert np.allclose(language.scores(t), loaded["language"].decision_function([t])[0])


def test_a_rebuilt_model_replaces_the_stale_ones(tmp_path, monkeypatch):
    """`make model` after the corpus changed writes model-<new digest>.pkl and removes the older artifacts (they
    would never be loaded again and each is several megabytes)."""
    from replies import model

    monkeypatch.setattr(model, "fit", lambda rows, **kw: {"intent": None, "language": None})
    monkeypatch.setattr(model, "_rows_parallel", lambda workers, progress: [])
    (tmp_path / "model-0000000000000000.pkl").write_bytes(b"old")
    (tmp_path / "notes.txt").write_text("kept")
    path = model.build(tmp_path / "model-1111111111111111.pkl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model-1111111111111111.pkl", "notes.txt"]
    assert path.exists()


REPLY = {"In_Reply_To": "<msg-1@outreach-sbx.test>"}


@pytest.mark.parametrize("body", [
    "Hi, Paula is on parental leave until spring. Maybe try our general inbox, hello@acme.com.",
    "Frau Brandt ist seit Oktober nicht mehr im Unternehmen. Schreiben Sie bitte an kontakt@acme.de.",
])
def test_a_colleagues_redirect_without_any_automatic_marker_is_not_an_absence_notice(body):
    """An absence notice is automatic; a colleague who writes that someone is away, with no automatic-mail header
    and no absence subject, redirects (`other`)."""
    assert c.classify(_mail(body, **REPLY)).label == "other"


@pytest.mark.parametrize("body,subject,headers", [
    ("Thank you for writing to the Acme press office. Your message has been received and is read every day.",
     "Automatic reply: Quick question", {"Auto_Submitted": "auto-replied"}),
    ("Sehr geehrte Damen und Herren, Ihre Nachricht ist bei uns eingegangen und wird in Kürze bearbeitet.",
     "Automatische Antwort: Quick question", {"X_Auto_Response_Suppress": "All"}),
    ("Nous vous remercions pour votre message, qui a bien été reçu. Nous répondons sous 72 heures.",
     "Réponse automatique : Quick question", {"Auto_Submitted": "auto-replied"}),
    ("This inbox is for supplier invoices only. Invoices without a purchase order number are returned.",
     "Re: Quick question", {"Auto_Submitted": "auto-replied"}),
])
def test_an_automatic_answer_that_announces_no_absence_is_other(body, subject, headers):
    """A generic "Automatic reply:" subject or an auto-reply header says software answered, not that anyone is
    away: without absence wording (rules or model) it is `other`."""
    v = c.classify(_mail(body, subject=subject, **headers))
    assert v.label == "other", v


@pytest.mark.parametrize("body,headers", [
    ("Marc Dupont ne fait plus partie de nos effectifs. Ce message ne sera pas lu. Écrivez à contact@acme.fr.",
     {"Auto_Submitted": "auto-replied"}),
    ("Ole Hansen er fratrådt. Denne postkasse bliver ikke læst. Skriv venligst til info@acme.dk.",
     {"X_Autoreply": "yes"}),
    ("I am out of the office until Monday with no access to email.", {"Auto_Submitted": "auto-replied"}),
])
def test_an_automatic_departure_or_absence_notice_is_out_of_office(body, headers):
    assert c.classify(_mail(body, subject="Re: Quick question", **headers)).label == "out_of_office"


def test_a_mail_gateways_rejection_is_a_bounce():
    """A gateway's rejection (not a DSN, from a postmaster, with a permanent SMTP status) is a bounce even when it
    carries an auto-reply header."""
    body = ("Your message to: jo@acme.com was blocked by the Protection Server.\n\n"
            "Reason: 550 5.7.1 Message rejected by policy.\n\nAction: failed")
    raw = _mail(body, subject="Message blocked: Quick question", Auto_Submitted="auto-replied").replace(
        b"From: Jane <jane@acme.com>", b"From: Postmaster <postmaster@gw.acme.com>")
    assert c.classify(raw).label == "bounce"


@pytest.mark.parametrize("body,label", [
    ("Your message landed in my spam folder, you may want to check your domain setup.", "other"),
    ("This is spam. Remove me.", "unsubscribe"),
    ("No need to follow up, we are not buying this year.", "unsubscribe"),
    ("Vi har det vi behøver. I behøver ikke skrive igen.", "unsubscribe"),
    ("Lavoriamo già con un altro fornitore, non serve che mi riscriviate.", "unsubscribe"),
    ("Nous avons déjà une solution, inutile de me relancer.", "unsubscribe"),
])
def test_requests_to_stop_in_other_words_and_the_spam_folder(body, label):
    assert c.classify(_mail(body, **REPLY)).label == label


@pytest.mark.parametrize("text", [
    "Mit freundlichen Grüßen\nAnna Schmidt\nLeiterin Einkauf\nBeispiel GmbH\nTel.: +49 30 555 1234\nwww.beispiel.example",
    "Med vänlig hälsning\nPer Olsson\nVD, Olssons Verkstad AB\nStorgatan 7, 721 30 Västerås\nTel 021-555 04 40",
    "------------------------------\n株式会社サンプル\n総務部 山田 花子\n〒100-0001 東京都千代田区1-1\nTEL 03-1234-5678\n"
    "------------------------------",
    "Met vriendelijke groet,\nEva Jansen\nJansen Advocaten | Kerkstraat 5, 1017 EK Amsterdam | T +31 20 555 0190\n"
    "Dit bericht is uitsluitend bestemd voor de geadresseerde. Indien u dit bericht onterecht ontvangt,\n"
    "wordt u verzocht de inhoud niet te gebruiken.",
])
def test_a_signature_block_that_starts_with_its_sign_off_is_an_empty_reply(text):
    assert c.strip_quotes_and_signature(text) == ""
    assert c.classify(_mail(text, **REPLY)).label == "other"


def test_a_confidentiality_notice_under_the_answer_is_not_read():
    text = ("Thursday at 10 works, send the invite.\n\nRaj\n\nCONFIDENTIALITY NOTICE: This e-mail message, including "
            "any attachments, is for the sole use of the intended recipient(s).")
    assert "CONFIDENTIALITY" not in c.strip_quotes_and_signature(text)


@pytest.mark.parametrize("body", [
    "Not now, we're mid-migration. Try me in Q3.",
    "Jetzt passt es nicht, melden Sie sich gerne wieder im Herbst.",
    "Ahora estamos cerrando el ejercicio. Escríbeme a principios de marzo, por favor.",
    "今は難しいので、4月頃に改めてご連絡いただけますか。",
])
def test_asking_to_be_contacted_again_at_a_stated_time_is_interest(body):
    """docs/replies.md: "asks to be contacted later at a stated time" is `interested`, whatever else the reply
    says, unless it asks to stop."""
    assert c.classify(_mail(body, **REPLY)).label == "interested"


@pytest.mark.parametrize("body", [
    "Please don't contact me again in 2027 or ever. Remove me.",
    "Hör inte av er igen i vår heller, tack.",
])
def test_a_negated_request_to_come_back_is_not_interest(body):
    assert c.classify(_mail(body, **REPLY)).label != "interested"


@pytest.mark.parametrize("body", [
    "Bitte streichen Sie diese Adresse aus Ihrer Datenbank, das ist ein Sammelpostfach.",
    "Wilt u dit adres uit uw bestand verwijderen? Het is een algemene mailbox.",
    "Lad mig være i fred, tak.",
    "Pode encerrar as tentativas de contato, obrigado.",
    "今後はメールもお電話もお控えいただけますでしょうか。",
    "Please switch off the automatic reminders, this is the third one.",
])
def test_requests_to_stop_in_more_idioms(body):
    assert c.classify(_mail(body, **REPLY)).label == "unsubscribe"


@pytest.mark.parametrize("text", [
    "The last email I got from you had a broken link.",
    "We don't get any more budget this year.",
    "Skriv till mig igen i april.",
    "Du behöver inte skriva ett långt svar, ring mig.",
    "Nie trzeba pisać długiego maila.",
])
def test_words_near_a_request_to_stop_are_not_one(text):
    assert not c.UNSUBSCRIBE_RE.search(text)


@pytest.mark.parametrize("body,subject,label", [
    # the pitch's own subject words behind "Re:" are not an automatic answer's subject
    ("Yes, very interested - can we talk Tuesday?", "Re: Cut your auto-reply handling time", "interested"),
    ("Sounds great, send me the pricing please.", "Re: Urlaubsplanung für Ihr Team", "interested"),
    # a disclaimer-ish word inside an answer does not erase it
    ("Hi Tom\nYes, we are interested - I am privileged to lead this project, call me.", "Re: Quick question",
     "interested"),
    ("Hi,\n\nThis email is intended for the whole team: yes, we want the demo on Tuesday.", "Re: Quick question",
     "interested"),
])
def test_a_persons_reply_is_read_as_one(body, subject, label):
    assert c.classify(_mail(body, subject=subject, **REPLY)).label == label


@pytest.mark.parametrize("body", [
    "Interested - but FYI my colleague bob@acme.com bounced: 550 5.1.1 user unknown. Use me.",
    "Our budget line is EUR 500 5.000.000 in total, call me about it.",
])
def test_smtp_words_in_a_persons_mail_do_not_make_a_bounce(body):
    assert c.classify(_mail(body)).label != "bounce"


@pytest.mark.parametrize("text", [
    "Vendors call us every week. Not interested, we renewed our contract in March.",
    "Not interested. If you have questions about our old order you may email us at support@b.com.",
    "Nein danke. Bitte melden Sie sich auf keinen Fall nochmal im Herbst.",
])
def test_a_time_and_a_contact_word_are_not_a_request_to_come_back(text):
    assert not c._asks_for_later(text)


# Mail that is not an answer to ours (CONTRACT 4.8b `other`), with the rule that decides it, and answers that
# look like it but are answers (a new message that refers to our mail, a reply in our thread with an invite).
NOT_ANSWERS = {
    "246-en-newsletter-list-headers": "list_mail",
    "247-de-newsletter-footer-only": "bulk_footer",
    "248-fr-product-update-list-unsubscribe": "list_mail",
    "249-es-newsletter-footer-html": "bulk_footer",
    "250-en-product-update-footer-only": "bulk_footer",
    "251-en-calendar-invite-google": "calendar",
    "252-de-calendar-invite-outlook": "calendar",
    "253-en-calendar-cancel": "calendar",
    "254-fr-calendar-accepted": "calendar",
    "255-en-internal-misdirected": "not_a_reply",
    "256-de-internal-misdirected": "not_a_reply",
    "257-es-internal-misdirected": "not_a_reply",
    "258-nl-internal-misdirected": "not_a_reply",
    "259-it-newsletter-list-id": "list_mail",
    "260-pt-newsletter-footer-only": "bulk_footer",
    "261-en-webinar-precedence-bulk": "bulk_mail",
}
ANSWERS_THAT_LOOK_LIKE_THEM = {
    "262-en-fresh-message-refers-to-pitch": "interested",
    "263-en-fresh-message-remove-me": "unsubscribe",
    "264-en-reply-with-invite": "interested",
    "265-de-reply-signature-newsletter-line": "interested",
}


@pytest.mark.parametrize(("name", "rule"), NOT_ANSWERS.items())
def test_mail_that_is_not_an_answer_is_other(name, rule):
    """A newsletter's unsubscribe footer is not a request to stop; an invitation or an internal message meant for
    someone else is not interest."""
    verdict = c.classify(_one(name.split("-", 1)[1]))
    assert (verdict.label, verdict.rule) == ("other", rule)


@pytest.mark.parametrize(("name", "label"), ANSWERS_THAT_LOOK_LIKE_THEM.items())
def test_answers_that_look_like_mail_for_someone_else_keep_their_label(name, label):
    assert c.classify(_one(name.split("-", 1)[1])).label == label


def test_the_model_build_prints_progress_and_gives_the_same_model_on_two_processes(tmp_path, monkeypatch):
    """`python -m replies.model` shares the work between processes and says what it is doing every few seconds (a
    first `make run` waited minutes on a silent build); the model is the one a single process builds."""
    import io

    import numpy as np

    from replies import model
    from replies.corpus import build as corpus_build

    files = sorted(CORPUS.glob("*/*.eml"))
    rows = [{"id": f"t{i}", "label": p.parent.name, "lang": ("en", "de")[i % 2], "split": "train",
             "raw": p.read_bytes()} for i, p in enumerate(files)]
    monkeypatch.setattr(corpus_build, "corpus", lambda: iter(rows))
    monkeypatch.setattr(model, "PROGRESS_SECONDS", 0.0)
    built = {}
    for workers in (1, 2):
        out = io.StringIO()
        path = model.build(tmp_path / str(workers) / "model-2222222222222222.pkl", workers=workers, out=out)
        lines = out.getvalue().splitlines()
        assert lines[0].startswith("[replies model] composing and reading the training corpus")
        assert any("fitting the intent" in line for line in lines) and "writing the model" in lines[-1]
        with open(path, "rb") as fh:
            built[workers] = pickle.load(fh)  # noqa: S301 - just built
    for head in ("intent", "language"):
        one, two = built[1][head].steps[-1][1], built[2][head].steps[-1][1]
        assert np.array_equal(one.coef_, two.coef_) and np.array_equal(one.intercept_, two.intercept_)
