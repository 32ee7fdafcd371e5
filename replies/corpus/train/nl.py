"""Dutch base phrasings (see en.py for the slots)."""

INTERESTED = [
    "Klinkt goed, laten we bellen.",
    "Graag, wat dacht je van {day} om {time}?",
    "{day} om {time} komt mij goed uit.",
    "Stuur me een uitnodiging voor {day}.",
    "Kunnen jullie de prijzen sturen?",
    "Wat kost dit voor een team van 20 mensen?",
    "Interessant. Heb je een korte presentatie?",
    "Ik wil graag een demo volgende week.",
    "We zoeken precies zoiets. Wanneer heb je tijd?",
    "Laten we 30 minuten inplannen, hier is mijn agenda: https://cal.example.com/afspraak",
    "Ik sta open voor een gesprek. Donderdagmiddag?",
    "Hoe werkt de koppeling met Salesforce?",
    "Is er een gratis proefperiode?",
    "We willen het proberen. Hoe beginnen we?",
    "Mijn collega {colleague} gaat hierover, ik zet haar in de cc. {colleague}, lijkt me de moeite waard.",
    "Ik stuur dit door naar {colleague}, onze {role}; hij neemt contact op voor een afspraak.",
    "Nu komt het niet uit, maar neem in {month} gerust weer contact op, dan praten we.",
    "Benader me na {month} nog eens, dan kijken we er goed naar.",
    "De timing is perfect, we zijn leveranciers aan het vergelijken.",
    "Ja graag, stuur meer informatie.",
    "Plan gerust iets in met mijn assistent.",
    "Ik ben benieuwd. Welke resultaten zien vergelijkbare bedrijven?",
    "ok, doen we",
    "ja",
    "Bel me morgenochtend op 06 12345678.",
    "Kunnen we het naar {day} verplaatsen? Anders ben ik erbij.",
    "Stuur me een offerte, dan bespreek ik het met het team.",
    "Wat is de minimale contractduur?",
    "Wat is het verschil met {comp}? We overwegen over te stappen.",
    "We zijn niet tevreden over {comp}, dus ja, vertel meer.",
    "Ik heb {day} een kwartiertje, als dat past.",
    "Geïnteresseerd. Kun je klantcases delen?",
    "Waarom niet. Stuur een paar tijden.",
    "Wat zou de prijs zijn voor 5 gebruikers?",
    "We staan open voor een pilot.",
    "Ik zou graag zien hoe het werkt.",
    "Ik ben op vakantie tot {day}, maar dit spreekt me aan: zullen we bellen als ik terug ben?",
    "Mail me in {month} opnieuw, dan is er budget.",
    "Met plezier, stel twee data voor.",
    "Waar worden de gegevens opgeslagen?",
    "Prima, tot {day}.",
    "We hebben interesse in een gesprek.",
]

NOT_INTERESTED = [
    "Bedankt, maar we hebben geen interesse.",
    "Nee, dank je.",
    "Past niet bij ons.",
    "We gebruiken al {comp} en zijn tevreden.",
    "Daar zijn we al voorzien.",
    "Hier hebben we geen budget voor, sorry.",
    "Nu niet, bedankt.",
    "We hebben net een driejarig contract met {comp} getekend.",
    "Ik sla over.",
    "Dat hebben we op dit moment niet nodig.",
    "We hebben dit zelf gebouwd, dus geen behoefte.",
    "Dank je, maar het heeft dit jaar geen prioriteit.",
    "We zijn te klein voor zo'n tool.",
    "Eerlijk gezegd zien we de meerwaarde niet. Toch bedankt.",
    "Geen interesse.",
    "We hebben vorige maand voor {comp} gekozen.",
    "Het past niet in onze strategie.",
    "We zijn niet van plan van leverancier te wisselen.",
    "We hebben een uitgavenstop, sorry.",
    "Niets voor ons, succes ermee.",
    "Ik denk niet dat het relevant is voor wat wij doen.",
    "Ons contract met {comp} loopt nog twee jaar.",
    "Dit soort werk besteden we niet uit.",
    "Nee. We zijn tevreden zo.",
    "Dank je, we blijven bij onze huidige oplossing.",
    "Voorlopig niet.",
    "Voor ons is het een nee.",
    "We hebben voor een andere richting gekozen.",
    "Het budget voor dit jaar is al verdeeld.",
    "We zoeken geen nieuwe tools.",
    "We gaan hier niet mee verder.",
    "Misschien een andere keer, nu niet.",
    "We hebben er de capaciteit niet voor.",
    "We werken al met een andere partij.",
    "Nee hoor, niet nodig.",
]

UNSUBSCRIBE = [
    "Haal me alsjeblieft van jullie lijst.",
    "Afmelden.",
    "Stop met mailen.",
    "Neem alstublieft geen contact meer met mij op.",
    "Stuur geen e-mails meer naar dit adres.",
    "Stop alsjeblieft.",
    "Graag geen follow-up meer.",
    "Ik heb me nooit aangemeld. Verwijder mijn adres.",
    "Op grond van de AVG verzoek ik u al mijn gegevens te verwijderen.",
    "Verwijder mijn persoonsgegevens en bevestig dat.",
    "Hoe komt u aan mijn adres? Verwijder het en mail niet meer.",
    "Geen interesse, en haal me graag uit toekomstige mailings.",
    "Nee bedankt. Schrijf me uit, alstublieft.",
    "Verwijder mijn contactgegevens uit uw database.",
    "Dit is spam. Stop met het sturen van berichten.",
    "Ik wil geen e-mails meer van jullie ontvangen.",
    "Mail me nooit meer.",
    "Geen follow-ups meer alsjeblieft, we hebben geen interesse.",
    "Haal ons van jullie verzendlijst.",
    "Staak alle contact.",
    "Meld mij en mijn team af, graag.",
    "Derde mail deze week. Stoppen nu.",
    "Geen mails meer graag.",
    "Haal me uit jullie CRM.",
    "Ik heb het al eerder gevraagd: haal me van de lijst.",
    "Verwijder mij uit het bestand.",
    "Uitschrijven graag.",
]

OTHER = [
    "Wie bent u?",
    "Hoe komt u aan mijn e-mailadres?",
    "Ik ben niet de juiste persoon.",
    "Verkeerde persoon, sorry.",
    "Daar ga ik niet over, probeer {colleague}.",
    "U kunt beter {colleague} mailen.",
    "Welk bedrijf is dit?",
    "Kennen wij elkaar?",
    "Ter info.",
    "Zie hieronder.",
    "Ontvangen, dank je.",
    "Bedankt.",
    "Ik stuur het door naar de juiste afdeling.",
    "Waar hebben we elkaar ontmoet?",
    "Is dit een massamail?",
    "Gebruik alstublieft ons leveranciersportaal.",
    "Inkoop loopt via het hoofdkantoor.",
    "Ik begrijp niet waar dit over gaat.",
    "De link in je mail werkt niet.",
    "{colleague} werkt hier niet meer, ik ben zijn opvolger.",
    "Waar gaat het precies over?",
    "Wie heeft u mijn naam gegeven?",
    'Ik ben alleen de officemanager.',
    'Kunt u aangeven waar dit over gaat?',
    'Is dit een automatische mail?',
    'Voor welke vestiging is dit?',
    'Ik zet {colleague} even in de cc.',
    'Lees ik later.',
    'Je mail kwam in mijn spam terecht, ter info.',
    'We zijn overgenomen, ik weet niet wie dit nu doet.',
    'Ik geef het door.',
    'Wie is Alex?',
    'Ben je een echt persoon?',
    'ok',
    'Ontvangen.',
]

OUT_OF_OFFICE = [
    "Ik ben tot {day} niet op kantoor en heb beperkt toegang tot mijn e-mail. Voor spoed kunt u terecht bij {colleague}.",
    "Bedankt voor uw bericht. Ik ben met vakantie en ben {day} weer terug.",
    "Ik ben afwezig tot {day}. Ik reageer na mijn terugkomst.",
    "Ik werk niet meer bij {company}. Neem contact op met {colleague}.",
    "Deze mailbox wordt niet meer gelezen.",
    "Ik ben met ouderschapsverlof tot {month}.",
    "Ik ben op reis en reageer bij terugkomst.",
    "Ik ben ziek. Voor dringende zaken kunt u {colleague} mailen.",
    "Automatisch antwoord: ik ben met vakantie tot {day}.",
    "Dit adres is niet meer in gebruik.",
    "Ik heb het bedrijf verlaten. Uw bericht wordt niet gelezen.",
]

NEUTRAL = ["Bedankt voor je bericht.", "Dank voor je mail.", "Ik hoop dat alles goed gaat."]
GREETINGS = ["Hoi {name},", "Hallo {name},", "Beste {name},", "Goedemorgen,", "Hallo,", "Dag {name},"]
SIGNOFFS = ["Met vriendelijke groet,", "Groeten,", "Groet,", "Mvg,", "Hartelijke groet,", "Bedankt,"]
NAMES = ["Sanne de Vries", "Daan Jansen", "Lotte Bakker", "Bram Visser", "Eva Smit"]
COLLEAGUES = ["Femke", "Joris", "Esther", "Pieter"]
ROLES = ["CTO", "salesmanager", "marketingmanager"]
DAYS = ["maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "morgen"]
TIMES = ["10.00 uur", "14.00 uur", "15.30 uur", "9 uur"]
MONTHS = ["januari", "maart", "september", "het nieuwe jaar"]
TITLES = ["Directeur", "Hoofd Verkoop", "Operationeel Manager"]
QUOTE_HEADERS = ["Op {date} schreef {sender}:", "Op {date} om 10:14 schreef {sender}:"]
OUTLOOK_HEADER = "Van: {sender}\nVerzonden: {date}\nAan: {me}\nOnderwerp: {subject}"
MOBILE = ["Verzonden vanaf mijn iPhone", "Verstuurd vanaf mijn telefoon"]
REPLY_PREFIX = "Re: "
AUTO_SUBJECT = ["Automatisch antwoord: {subject}", "Afwezig: {subject}"]
SUBJECTS = ["Korte vraag over {company}", "Een idee voor de sales van {company}"]
PITCHES = [
    "Hoi {first},\n\nIk zag dat {company} salesmensen zoekt. Wij helpen teams zoals het jouwe 30% meer "
    "afspraken te boeken. Heb je volgende week 15 minuten?\n\nGroet,\nAlex",
    "Beste {first},\n\nOns platform vindt geverifieerde e-mailadressen en verzorgt de hele reeks. "
    "Zou een korte demo interessant zijn?\n\nMet vriendelijke groet,\nAlex",
]
