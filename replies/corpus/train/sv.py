"""Swedish base phrasings (see en.py for the slots)."""

INTERESTED = [
    "Låter bra, vi hörs.",
    "Gärna, vad sägs om {day} klockan {time}?",
    "{day} klockan {time} passar mig.",
    "Skicka en kalenderinbjudan för {day}.",
    "Kan ni skicka priser?",
    "Vad kostar det för ett team på 20 personer?",
    "Intressant. Har du en kort presentation?",
    "Jag vill gärna se en demo nästa vecka.",
    "Vi letar efter något sådant. När har du tid?",
    "Vi bokar 30 minuter, här är min kalender: https://cal.example.com/mote",
    "Jag är öppen för ett samtal. Torsdag eftermiddag?",
    "Hur fungerar integrationen med Salesforce?",
    "Finns det en gratis provperiod?",
    "Vi vill testa. Hur kommer vi igång?",
    "Det här är min kollega {colleague}s område, jag lägger henne på kopia. {colleague}, värt ett samtal tycker jag.",
    "Jag skickar vidare till {colleague}, vår {role}, som hör av sig för att boka ett möte.",
    "Det passar inte just nu, men hör av dig i {month} så pratar vi.",
    "Kontakta mig igen efter {month} så tittar vi på det ordentligt.",
    "Tajmingen är perfekt, vi utvärderar leverantörer nu.",
    "Ja tack, mer information vore bra.",
    "Boka gärna en tid med min assistent.",
    "Jag är nyfiken. Vilka resultat har liknande företag fått?",
    "ok, vi kör",
    "ja",
    "Ring mig i morgon förmiddag på 070-123 45 67.",
    "Kan vi flytta till {day}? Annars är jag med.",
    "Skicka en offert så går jag igenom den med teamet.",
    "Vilken är den kortaste avtalstiden?",
    "Hur skiljer ni er från {comp}? Vi funderar på att byta.",
    "Vi är inte nöjda med {comp}, så ja, berätta mer.",
    "Jag har en kvart på {day}, om det passar.",
    "Intresserad. Kan du dela kundcase?",
    "Varför inte. Skicka några tider.",
    "Vad skulle priset bli för 5 användare?",
    "Vi är öppna för ett pilotprojekt.",
    "Jag skulle gärna se hur det fungerar.",
    "Jag är på semester till {day}, men det här låter intressant: kan vi prata när jag är tillbaka?",
    "Maila mig igen i {month}, då har vi budget.",
    "Absolut, föreslå två datum.",
    "Var lagras datan?",
    "Toppen, vi ses {day}.",
    "Vi är intresserade av ett möte.",
]

NOT_INTERESTED = [
    "Tack, men vi är inte intresserade.",
    "Nej tack.",
    "Passar inte oss.",
    "Vi använder redan {comp} och är nöjda.",
    "Vi har redan det här täckt.",
    "Vi har ingen budget för det, tyvärr.",
    "Inte nu, tack.",
    "Vi har precis skrivit ett treårsavtal med {comp}.",
    "Jag avstår.",
    "Det behöver vi inte just nu.",
    "Vi har byggt det själva, så inget behov.",
    "Tack, men det är inte prioriterat i år.",
    "Vi är för små för ett sådant verktyg.",
    "Ärligt talat ser vi inte värdet. Tack ändå.",
    "Inte intresserad.",
    "Vi valde {comp} förra månaden.",
    "Det passar inte vår strategi.",
    "Vi planerar inte att byta leverantör.",
    "Vi har kostnadsstopp, tyvärr.",
    "Inget för oss, lycka till.",
    "Jag tror inte att det är relevant för oss.",
    "Vårt avtal med {comp} löper två år till.",
    "Vi lägger inte ut sådant arbete.",
    "Nej. Vi är nöjda som det är.",
    "Tack, vi stannar kvar med vår nuvarande lösning.",
    "Inte i nuläget.",
    "Det blir ett nej från oss.",
    "Vi har bestämt oss för en annan väg.",
    "Årets budget är redan fördelad.",
    "Vi letar inte efter nya verktyg.",
    "Vi går inte vidare med detta.",
    "Kanske en annan gång, inte nu.",
    "Vi har inte kapacitet för det.",
    "Vi jobbar redan med en annan leverantör.",
    "Inget intresse, tack.",
]

UNSUBSCRIBE = [
    "Ta bort mig från er lista.",
    "Avregistrera mig.",
    "Sluta maila mig.",
    "Kontakta mig inte igen.",
    "Skicka inga fler mejl till den här adressen.",
    "Sluta, tack.",
    "Ingen uppföljning, tack.",
    "Jag har aldrig anmält mig. Radera min adress.",
    "Enligt GDPR begär jag att ni raderar alla mina uppgifter.",
    "Radera mina personuppgifter och bekräfta.",
    "Var fick du min adress ifrån? Radera den och skriv inte igen.",
    "Inte intresserad, och ta bort mig från framtida utskick.",
    "Nej tack. Avsluta prenumerationen, tack.",
    "Ta bort mina kontaktuppgifter ur er databas.",
    "Det här är spam. Sluta skicka meddelanden.",
    "Jag vill inte få fler mejl från er.",
    "Skriv aldrig till mig igen.",
    "Inga fler påminnelser, vi är inte intresserade.",
    "Ta bort oss från er utskickslista.",
    "Upphör med all kontakt.",
    "Avregistrera mig och mitt team.",
    "Tredje mejlet den här veckan. Sluta.",
    "Inga fler mejl, tack.",
    "Ta bort mig ur ert CRM.",
    "Jag har bett om det förut: ta bort mig från listan.",
    "Avsluta utskicken till mig.",
]

OTHER = [
    "Vem är du?",
    "Hur fick du min e-postadress?",
    "Jag är inte rätt person.",
    "Fel person, tyvärr.",
    "Det är inte mitt område, prova {colleague}.",
    "Kontakta hellre {colleague}.",
    "Vilket företag är det här?",
    "Känner vi varandra?",
    "För kännedom.",
    "Se nedan.",
    "Mottaget, tack.",
    "Tack.",
    "Jag vidarebefordrar till rätt avdelning.",
    "Var träffades vi?",
    "Är det här ett massutskick?",
    "Använd vår leverantörsportal.",
    "Inköp sköts av huvudkontoret.",
    "Jag förstår inte vad det gäller.",
    "Länken i ditt mejl fungerar inte.",
    "{colleague} jobbar inte här längre, jag har tagit över.",
    "Vad gäller det exakt?",
    "Vem gav dig mitt namn?",
    'Jag är bara kontorsansvarig.',
    'Kan du berätta vad det gäller?',
    'Är det här ett automatiskt mejl?',
    'Vilket kontor gäller det?',
    'Jag lägger {colleague} på kopia för kännedom.',
    'Läser senare.',
    'Ditt mejl hamnade i skräpposten, bara så du vet.',
    'Vi har blivit uppköpta, jag vet inte vem som sköter det nu.',
    'Jag skickar det vidare.',
    'Vem är Alex?',
    'Är du en riktig person?',
    'ok',
    'Mottaget.',
]

OUT_OF_OFFICE = [
    "Jag är inte på kontoret förrän {day} och har begränsad tillgång till e-post. Vid brådskande ärenden kontakta {colleague}.",
    "Tack för ditt meddelande. Jag är på semester och tillbaka {day}.",
    "Jag är borta till {day}. Jag svarar när jag är tillbaka.",
    "Jag arbetar inte längre på {company}. Kontakta {colleague}.",
    "Den här brevlådan bevakas inte längre.",
    "Jag är föräldraledig till {month}.",
    "Jag är på resande fot och svarar när jag kommer tillbaka.",
    "Jag är sjukskriven. Kontakta {colleague} vid brådskande ärenden.",
    "Autosvar: jag är på semester till {day}.",
    "Den här adressen används inte längre.",
    "Jag har slutat på företaget. Ditt mejl kommer inte att läsas.",
]

NEUTRAL = ["Tack för ditt mejl.", "Tack för meddelandet.", "Hoppas allt är bra."]
GREETINGS = ["Hej {name},", "Hej!", "Hejsan,", "Hej {name}!", "God morgon,"]
SIGNOFFS = ["Vänliga hälsningar,", "Mvh", "Hälsningar,", "Med vänlig hälsning,", "Tack,", "Ha det bra,"]
NAMES = ["Erik Andersson", "Karin Johansson", "Anders Nilsson", "Emma Lindberg", "Johan Berg"]
COLLEAGUES = ["Maria", "Oskar", "Sofia", "Henrik"]
ROLES = ["CTO", "försäljningschef", "marknadschef"]
DAYS = ["måndag", "tisdag", "onsdag", "torsdag", "fredag", "i morgon"]
TIMES = ["10", "14", "15.30", "9"]
MONTHS = ["januari", "mars", "september", "nästa kvartal"]
TITLES = ["VD", "Försäljningschef", "IT-chef"]
QUOTE_HEADERS = ["Den {date} skrev {sender}:", "{date} skrev {sender}:"]
OUTLOOK_HEADER = "Från: {sender}\nSkickat: {date}\nTill: {me}\nÄmne: {subject}"
MOBILE = ["Skickat från min iPhone", "Skickat från min mobil"]
REPLY_PREFIX = "SV: "
AUTO_SUBJECT = ["Autosvar: {subject}", "Frånvaro: {subject}"]
SUBJECTS = ["Snabb fråga om {company}", "En idé för {company}s försäljning"]
PITCHES = [
    "Hej {first},\n\nJag såg att {company} rekryterar säljare. Vi hjälper team som ert att boka 30 % fler "
    "möten. Har du 15 minuter nästa vecka?\n\nMvh\nAlex",
    "Hej {first},\n\nVår plattform hittar verifierade e-postadresser och sköter hela sekvensen. "
    "Vore en kort demo intressant?\n\nVänliga hälsningar,\nAlex",
]
