"""German reply phrasings (incl. Swiss and Austrian), development set (second author; never used for training)."""

INTERESTED = [
    "Klingt spannend, wann hätten Sie Zeit?",
    "Passt, {day} um {time} geht bei mir. Schicken Sie einfach eine Einladung rüber.",
    "Was kostet der Spaß denn so ungefähr für 25 User? Wenn der Preis stimmt, schauen wir's uns an.",
    "Ehrlich gesagt bin ich skeptisch, wir haben schon {comp}. Was genau können Sie besser?",
    "Liegen die Daten auf Servern in der EU? Ohne AVV und DSGVO-Konformität brauchen wir gar nicht weiterreden.",
    "Grüezi, das tönt interessant. Könnten Sie uns nächste Woche eine kurze Demo zeigen?",
    "Servus, grad is es zach bei uns, aber meld dich im {month} nochmal, dann hab ich mehr Luft.",
    "Vielleicht. Kommt halt drauf an, was es kostet und ob unsere IT mitspielt.",
    "Ich hab {colleague} in CC genommen, der ist bei uns {role} und genau für sowas zuständig. {colleague}, schau dir das mal an, könnte was für uns sein.",
    "Wahrscheinlich eher nix für uns, aber schicken Sie mir trotzdem mal die Preisliste.",
    "Unser Vertrag mit {comp} läuft im {month} aus. Melden Sie sich ein paar Wochen vorher, dann vergleichen wir.",
    "jo gerne mal quatschen. mo oder di nachmittag?",
]

NOT_INTERESTED = [
    "Danke, kein Bedarf.",
    "Wir haben das intern selbst gebaut und sind damit zufrieden.",
    "Wir haben gerade erst einen Dreijahresvertrag mit {comp} unterschrieben.",
    "Dafür ist dieses Jahr leider kein Budget da.",
    "Aktuell kein Thema bei uns.",
    "Nee, lass mal.",
    "Danke für die Infos, aber das passt nicht zu uns.",
    "Schon die dritte Mail diese Woche... Die Antwort bleibt trotzdem nein.",
    "Vielleicht irgendwann mal, im Moment aber nicht.",
    "Merci für die Anfrage, aber wir verzichten.",
    "Ne Preisliste brauch ich nicht, wir sind mit {comp} bestens versorgt.",
    "Hab's mit {colleague} besprochen, wir sehen da momentan keinen Mehrwert für uns.",
]

UNSUBSCRIBE = [
    "Bitte nehmen Sie mich aus Ihrem Verteiler.",
    "Kein Interesse. Bitte löschen Sie meine Adresse.",
    "Bitte keine weiteren Mails an diese Adresse.",
    "Woher haben Sie meine Daten? Ich fordere Sie gemäß Art. 17 DSGVO auf, diese unverzüglich zu löschen und mir das schriftlich zu bestätigen.",
    "HÖREN SIE ENDLICH AUF MIR ZU SCHREIBEN!!!",
    "Bitte nicht mehr nachfassen, danke.",
    "Abmelden.",
    "Ich verbitte mir weitere Kontaktaufnahmen. Beim nächsten Mal melde ich das als Spam.",
    "Bitte tragen Sie mich aus und kontaktieren Sie auch meine Kolleginnen und Kollegen nicht mehr.",
    "Nichts für ungut, aber bitte streichen Sie mich aus Ihrer Sequenz. Falls wir so etwas brauchen, melde ich mich selbst.",
]

OTHER = [
    "Wer sind Sie?",
    "Woher haben Sie eigentlich meine Adresse?",
    "Da bin ich die falsche Ansprechpartnerin, wenden Sie sich bitte an den Einkauf.",
    "Bitte richten Sie Anfragen an info@{company}.de.",
    "Zur Info.",
    "Danke.",
    "Erhalten.",
    "ok",
    "Der Link in Ihrer Mail funktioniert nicht, da kommt nur eine Fehlermeldung.",
    "Ist das eine automatische Mail oder schreibt hier ein echter Mensch?",
    "Sie verwechseln uns wohl, wir sind ein Handwerksbetrieb und keine Softwarefirma.",
    "Worum geht es genau? Kennen wir uns?",
    "Ich nehme {colleague} mal in CC, nur zur Kenntnis.",
    "Ich bin seit letztem Monat in einer anderen Abteilung, zuständig ist jetzt {colleague}.",
    "Ihre Mail ist bei mir nur als Kauderwelsch angekommen, lauter komische Zeichen statt Umlaute.",
]

OUT_OF_OFFICE = [
    "Vielen Dank für Ihre Nachricht. Ich bin bis einschließlich {day} nicht im Büro. In dringenden Fällen wenden Sie sich bitte an {colleague} ({colleague}@{company}.de).",
    "Ich befinde mich derzeit in Elternzeit und bin ab {month} wieder erreichbar. Ihre E-Mail wird nicht weitergeleitet.",
    "Diese Adresse ist nicht mehr aktiv. Frau {colleague} ist nicht mehr für {company} tätig. Bitte wenden Sie sich an kontakt@{company}.de.",
    "Dieses Postfach wird nicht überwacht. Bitte antworten Sie nicht auf diese E-Mail.",
    "Ich bin diese Woche auf der Messe in Hannover und habe nur eingeschränkt Zugriff auf meine E-Mails.",
    "Automatische Antwort: Ich bin krankheitsbedingt abwesend. Ihre Nachricht wird nach meiner Rückkehr bearbeitet.",
    "Aufgrund des Feiertags ist unser Büro heute geschlossen. Ab {day} sind wir wieder für Sie da.",
    "Besten Dank für Ihre Nachricht. Ich bin bis am {day} in den Ferien und lese meine Mails nicht. In dringenden Fällen: +41 44 123 45 67. / I am on holiday until {day} with no access to email.",
]
