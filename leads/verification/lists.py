"""Address classification lists: disposable domains (the maintained `disposable-email-domains` package), role
accounts and free-mail providers."""

from __future__ import annotations

import re

from disposable_email_domains import allowlist as _disposable_allowlist
from disposable_email_domains import blocklist as _disposable_blocklist

# Local parts that reach a function or a team rather than one person (RFC 2142 and common practice). Compared
# after lower-casing and dropping a `+tag` and dots/dashes/underscores, so "no-reply", "no_reply" and "noreply"
# all match "noreply".
ROLE_LOCAL_PARTS = frozenset("""
abuse accounting accounts admin administrator admissions all alerts billing booking bookings careers ceo
compliance contact contactus contracts customercare customerservice customersupport daemon dev developers devnull
dmarc donations enquiries enquiry events everyone feedback finance founders frontdesk hello help helpdesk
hostmaster hr info information inquiries inquiry investor investors it jobs legal list listserv mail mailerdaemon
maildaemon mailer marketing media news newsletter noc noreply notifications nobody office operations ops orders
partners payments payroll postmaster press privacy procurement purchasing recruiting recruitment reception
registrar remove reservations root sales security service services shop social spam staff subscribe support
sysadmin team tech undisclosedrecipients unsubscribe usenet uucp webmaster welcome www
""".split())

# Consumer mailbox providers: an address there is a person's private mailbox, not a company's.
FREE_PROVIDER_DOMAINS = frozenset("""
gmail.com googlemail.com
yahoo.com yahoo.co.uk yahoo.co.in yahoo.co.jp yahoo.com.br yahoo.com.ar yahoo.com.mx yahoo.de yahoo.fr yahoo.es
yahoo.it yahoo.ca yahoo.com.au yahoo.co.id yahoo.com.sg yahoo.com.ph ymail.com rocketmail.com
outlook.com outlook.fr outlook.de outlook.es outlook.it outlook.jp hotmail.com hotmail.co.uk hotmail.fr hotmail.de
hotmail.es hotmail.it hotmail.com.br live.com live.co.uk live.fr live.de live.nl live.it live.ca live.com.au
msn.com passport.com windowslive.com
aol.com aim.com verizon.net
icloud.com me.com mac.com
proton.me protonmail.com protonmail.ch pm.me
gmx.com gmx.net gmx.de gmx.at gmx.ch gmx.fr gmx.us mail.com email.com usa.com
web.de t-online.de freenet.de arcor.de posteo.de posteo.net mailbox.org
yandex.com yandex.ru ya.ru mail.ru bk.ru inbox.ru list.ru rambler.ru
zoho.com zohomail.com fastmail.com fastmail.fm hey.com tutanota.com tutanota.de tuta.io tuta.com
qq.com foxmail.com 163.com 126.com yeah.net sina.com sina.cn sohu.com aliyun.com
naver.com daum.net hanmail.net kakao.com
rediffmail.com libero.it virgilio.it alice.it tiscali.it laposte.net orange.fr wanadoo.fr free.fr sfr.fr
seznam.cz centrum.cz wp.pl o2.pl onet.pl interia.pl
btinternet.com sky.com virginmedia.com ntlworld.com talktalk.net
comcast.net att.net sbcglobal.net bellsouth.net charter.net cox.net earthlink.net juno.com optonline.net
shaw.ca rogers.com sympatico.ca bigpond.com optusnet.com.au uol.com.br bol.com.br terra.com.br
""".split())

_ROLE_STRIP = re.compile(r"[.\-_]")


def _suffixes(domain: str):
    parts = domain.split(".")
    for i in range(len(parts) - 1):
        yield ".".join(parts[i:])


def is_disposable(domain: str) -> bool:
    """The domain, or a parent of it, is on the disposable list and not on its allowlist."""
    domain = domain.lower().rstrip(".")
    if domain in _disposable_allowlist:
        return False
    return any(s in _disposable_blocklist for s in _suffixes(domain))


def is_role_account(local_part: str) -> bool:
    base = local_part.lower().split("+", 1)[0]
    return base in ROLE_LOCAL_PARTS or _ROLE_STRIP.sub("", base) in ROLE_LOCAL_PARTS


def is_free_provider(domain: str) -> bool:
    return domain.lower().rstrip(".") in FREE_PROVIDER_DOMAINS
