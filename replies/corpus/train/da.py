"""Danish base phrasings (see en.py for the slots)."""

INTERESTED = [
    "Det lyder godt, lad os tage en snak.",
    "Gerne, hvad med {day} klokken {time}?",
    "{day} klokken {time} passer mig fint.",
    "Send mig en kalenderinvitation til {day}.",
    "Kan I sende priser?",
    "Hvad koster det for et team på 20 personer?",
    "Spændende. Har du en kort præsentation?",
    "Jeg vil gerne se en demo i næste uge.",
    "Vi leder efter noget i den stil. Hvornår har du tid?",
    "Lad os booke 30 minutter, her er min kalender: https://cal.example.com/moede",
    "Jeg er åben for en snak. Torsdag eftermiddag?",
    "Hvordan fungerer integrationen med Salesforce?",
    "Er der en gratis prøveperiode?",
    "Vi vil gerne prøve det. Hvordan kommer vi i gang?",
    "Det er min kollega {colleague}s område, jeg har sat hende cc. {colleague}, det er værd at tage en snak.",
    "Jeg sender det videre til {colleague}, vores {role}, som vender tilbage for at aftale et møde.",
    "Det passer ikke lige nu, men skriv gerne igen i {month}, så tager vi en snak.",
    "Kontakt mig igen efter {month}, så kigger vi ordentligt på det.",
    "Timingen er perfekt, vi er ved at vurdere leverandører.",
    "Ja tak, mere information vil være fint.",
    "Book gerne en tid med min assistent.",
    "Jeg er nysgerrig. Hvilke resultater har lignende virksomheder fået?",
    "ok, lad os gøre det",
    "ja",
    "Ring til mig i morgen formiddag på 20 12 34 56.",
    "Kan vi rykke det til {day}? Ellers er jeg med.",
    "Send mig et tilbud, så gennemgår jeg det med teamet.",
    "Hvad er den korteste bindingsperiode?",
    "Hvordan adskiller I jer fra {comp}? Vi overvejer at skifte.",
    "Vi er ikke tilfredse med {comp}, så ja, fortæl mere.",
    "Jeg har et kvarter {day}, hvis det passer.",
    "Interesseret. Kan du dele kundecases?",
    "Hvorfor ikke. Send et par tidspunkter.",
    "Hvad ville prisen være for 5 brugere?",
    "Vi er åbne for et pilotprojekt.",
    "Jeg vil gerne se, hvordan det virker.",
    "Jeg er på ferie til {day}, men det lyder relevant: kan vi tale sammen, når jeg er tilbage?",
    "Skriv til mig igen i {month}, så har vi budget.",
    "Med glæde, foreslå to datoer.",
    "Hvor bliver data opbevaret?",
    "Super, vi ses {day}.",
    "Vi er interesserede i et møde.",
]

NOT_INTERESTED = [
    "Tak, men vi er ikke interesserede.",
    "Nej tak.",
    "Det passer ikke til os.",
    "Vi bruger allerede {comp} og er tilfredse.",
    "Vi er allerede dækket ind her.",
    "Vi har ikke budget til det, desværre.",
    "Ikke lige nu, tak.",
    "Vi har lige underskrevet en treårig aftale med {comp}.",
    "Jeg springer over.",
    "Det har vi ikke brug for i øjeblikket.",
    "Vi har selv bygget det, så intet behov.",
    "Tak, men det er ikke en prioritet i år.",
    "Vi er for små til sådan et værktøj.",
    "Ærligt talt ser vi ikke værdien. Tak alligevel.",
    "Ikke interesseret.",
    "Vi valgte {comp} sidste måned.",
    "Det passer ikke ind i vores strategi.",
    "Vi har ingen planer om at skifte leverandør.",
    "Vi har indkøbsstop, beklager.",
    "Ikke noget for os, held og lykke.",
    "Jeg tror ikke, det er relevant for os.",
    "Vores aftale med {comp} løber to år endnu.",
    "Vi outsourcer ikke den slags arbejde.",
    "Nej. Vi er godt tilfredse, som det er.",
    "Tak, vi bliver ved vores nuværende løsning.",
    "Ikke på nuværende tidspunkt.",
    "Det bliver et nej fra os.",
    "Vi har valgt en anden retning.",
    "Årets budget er allerede fordelt.",
    "Vi leder ikke efter nye værktøjer.",
    "Vi går ikke videre med det.",
    "Måske en anden gang, ikke nu.",
    "Vi har ikke kapacitet til det.",
    "Vi arbejder allerede med en anden leverandør.",
    "Ingen interesse, tak.",
]

UNSUBSCRIBE = [
    "Fjern mig venligst fra jeres liste.",
    "Afmeld mig.",
    "Stop med at skrive til mig.",
    "Kontakt mig venligst ikke igen.",
    "Send ikke flere mails til denne adresse.",
    "Stop venligst.",
    "Ingen opfølgning, tak.",
    "Jeg har aldrig tilmeldt mig. Slet min adresse.",
    "I henhold til GDPR beder jeg jer slette alle mine oplysninger.",
    "Slet mine personoplysninger og bekræft det.",
    "Hvor har du min adresse fra? Slet den og skriv ikke igen.",
    "Ikke interesseret, og fjern mig venligst fra fremtidige udsendelser.",
    "Nej tak. Afmeld mig venligst.",
    "Fjern mine kontaktoplysninger fra jeres database.",
    "Det her er spam. Stop med at sende beskeder.",
    "Jeg ønsker ikke at modtage flere mails fra jer.",
    "Skriv aldrig til mig igen.",
    "Ikke flere opfølgninger, vi er ikke interesserede.",
    "Fjern os fra jeres mailliste.",
    "Ophør med al kontakt.",
    "Afmeld mig og mit team.",
    "Tredje mail i denne uge. Stop.",
    "Ikke flere mails, tak.",
    "Fjern mig fra jeres CRM.",
    "Jeg har bedt om det før: fjern mig fra listen.",
    "Frameld mig jeres nyhedsbreve og mails.",
]

OTHER = [
    "Hvem er du?",
    "Hvordan har du fået min e-mailadresse?",
    "Jeg er ikke den rette person.",
    "Forkert person, beklager.",
    "Det er ikke mit område, prøv {colleague}.",
    "Skriv hellere til {colleague}.",
    "Hvilken virksomhed er det?",
    "Kender vi hinanden?",
    "Til orientering.",
    "Se nedenfor.",
    "Modtaget, tak.",
    "Tak.",
    "Jeg videresender til den rette afdeling.",
    "Hvor mødtes vi?",
    "Er det en masseudsendelse?",
    "Brug venligst vores leverandørportal.",
    "Indkøb håndteres af hovedkontoret.",
    "Jeg forstår ikke, hvad det drejer sig om.",
    "Linket i din mail virker ikke.",
    "{colleague} arbejder her ikke længere, jeg har overtaget.",
    "Hvad drejer det sig præcist om?",
    "Hvem gav dig mit navn?",
    'Jeg er bare kontorchef.',
    'Kan du fortælle, hvad det drejer sig om?',
    'Er det en automatisk mail?',
    'Hvilket kontor er det til?',
    'Jeg sætter {colleague} cc til orientering.',
    'Læser det senere.',
    'Din mail endte i spam, bare så du ved det.',
    'Vi er blevet opkøbt, jeg ved ikke, hvem der tager sig af det nu.',
    'Jeg sender det videre.',
    'Hvem er Alex?',
    'Er du et rigtigt menneske?',
    'ok',
    'Modtaget.',
]

OUT_OF_OFFICE = [
    "Jeg er ikke på kontoret før {day} og har begrænset adgang til mail. I hastende tilfælde kontakt {colleague}.",
    "Tak for din mail. Jeg holder ferie og er tilbage {day}.",
    "Jeg er fraværende indtil {day}. Jeg svarer, når jeg er tilbage.",
    "Jeg arbejder ikke længere hos {company}. Kontakt venligst {colleague}.",
    "Denne postkasse bliver ikke længere læst.",
    "Jeg er på barsel indtil {month}.",
    "Jeg er på rejse og svarer, når jeg kommer hjem.",
    "Jeg er sygemeldt. Kontakt {colleague} i hastende sager.",
    "Autosvar: jeg holder ferie indtil {day}.",
    "Denne adresse er ikke længere i brug.",
    "Jeg har forladt virksomheden. Din mail bliver ikke læst.",
]

NEUTRAL = ["Tak for din mail.", "Tak for beskeden.", "Håber alt er vel."]
GREETINGS = ["Hej {name},", "Hej!", "Kære {name},", "Godmorgen,", "Hej {name}"]
SIGNOFFS = ["Venlig hilsen", "Med venlig hilsen", "Mvh", "Bedste hilsner", "Hilsen", "Tak,"]
NAMES = ["Mette Hansen", "Lars Nielsen", "Sofie Jensen", "Rasmus Pedersen", "Camilla Larsen"]
COLLEAGUES = ["Louise", "Mads", "Ida", "Søren"]
ROLES = ["CTO", "salgschef", "marketingchef"]
DAYS = ["mandag", "tirsdag", "onsdag", "torsdag", "fredag", "i morgen"]
TIMES = ["10", "14", "15.30", "9"]
MONTHS = ["januar", "marts", "september", "næste kvartal"]
TITLES = ["Direktør", "Salgschef", "IT-chef"]
QUOTE_HEADERS = ["Den {date} skrev {sender}:", "{date} skrev {sender}:"]
OUTLOOK_HEADER = "Fra: {sender}\nSendt: {date}\nTil: {me}\nEmne: {subject}"
MOBILE = ["Sendt fra min iPhone", "Sendt fra min mobil"]
REPLY_PREFIX = "SV: "
AUTO_SUBJECT = ["Autosvar: {subject}", "Fraværende: {subject}"]
SUBJECTS = ["Hurtigt spørgsmål om {company}", "En idé til {company}s salg"]
PITCHES = [
    "Hej {first},\n\nJeg kunne se, at {company} ansætter sælgere. Vi hjælper teams som jeres med at booke 30 % "
    "flere møder. Har du 15 minutter i næste uge?\n\nMvh\nAlex",
    "Hej {first},\n\nVores platform finder verificerede mailadresser og klarer hele sekvensen. "
    "Kunne en kort demo være interessant?\n\nVenlig hilsen\nAlex",
]
