"""Dutch (Netherlands and Flemish) reply phrasings, development set (second author; never used for training)."""

INTERESTED = [
    "Hmm, klinkt niet verkeerd. Kan het ook koppelen met AFAS? Dan wil ik wel even sparren.",
    "{day} om {time} is prima. Stuur maar een uitnodiging.",
    "Wat kost dat ongeveer voor een team van 12 man? Als de prijs klopt wil ik er best naar kijken.",
    "Ik ben eerlijk gezegd sceptisch. Wat doen jullie beter dan {comp}?",
    "Werkt het ook met Exact Online? En staat de data in de EU?",
    "Ik zet {colleague} in de cc, onze {role}, die gaat hierover. {colleague}, lijkt me de moeite waard om even naar te kijken.",
    "Nu even niet, we zitten midden in een reorganisatie. Stuur me in {month} nog een berichtje, dan plannen we iets.",
    "Misschien, hangt een beetje van de prijs af.",
    "Dag, dat klinkt wel plezant. Kunnen jullie eens langskomen voor een demo? Wij zitten in Gent.",
    "Waarschijnlijk niks voor ons, maar puur uit nieuwsgierigheid: wat kost het?",
    "Na de bouwvak heb ik weer lucht, mail me dan maar opnieuw.",
    "ja leuk, bel me maar even. morgen na 3 uur?",
]

NOT_INTERESTED = [
    "Bedankt, maar geen interesse.",
    "Dat hebben we zelf intern gebouwd.",
    "We hebben net voor drie jaar getekend bij {comp}.",
    "De pot is leeg dit jaar, dus helaas.",
    "Staat niet op de roadmap, dus nee.",
    "nee joh, laat maar",
    "Prijslijst hoeft niet, we zitten goed met {comp}.",
    "Alweer een mail? Knap volhardend, maar het blijft nee.",
    "Voorlopig niet. Als we het nodig hebben, horen jullie het wel van ons.",
    "Ah ja, nog een wondertool, precies wat we nodig hadden. Nee dank je.",
    "Ik heb het met {colleague} besproken, we gaan er niet mee verder.",
    "Laat maar zitten, we hebben zoiets al eens geprobeerd en dat werd niks.",
]

UNSUBSCRIBE = [
    "Ik heb al drie keer nee gezegd. Hou nou eens op met mailen.",
    "Geen interesse. Verwijder mijn e-mailadres uit jullie bestand.",
    "Gelieve mij niet meer te contacteren.",
    "Hoe komen jullie aan mijn gegevens? Op grond van de AVG verzoek ik u al mijn persoonsgegevens te verwijderen.",
    "STOP MET MAILEN.",
    "Afmelden.",
    "Neem ook geen contact meer op met mijn collega's bij {company}.",
    "Nog één mail en ik meld jullie als spam. Ophouden nu.",
    "Niks persoonlijks, maar haal me uit de sequence. Als we ooit zoiets nodig hebben, meld ik me wel.",
    "Ik werk niet meer bij {company}, gelieve dit adres uit jullie lijsten te verwijderen.",
]

OTHER = [
    "Van welk bedrijf zijn jullie eigenlijk?",
    "Hoe komt u aan mijn adres?",
    "Daarvoor moet u bij inkoop zijn, niet bij mij.",
    "Stuur het maar naar info@{company}.nl.",
    "Ik stuur het even door naar de juiste afdeling.",
    "Dank je.",
    "Ok, genoteerd.",
    "ok",
    "De link in je mail werkt niet.",
    "Is dit een geautomatiseerde mail of zit daar echt iemand achter?",
    "U heeft het verkeerde bedrijf, wij zijn een bakkerij.",
    "Sorry, kennen wij elkaar? Ik snap niet waar dit over gaat.",
    "Ik zet {colleague} even in de cc, ter kennisname.",
    "Ik doe dit niet meer, {colleague} heeft het overgenomen.",
    "Volgens mij was dit niet voor mij bedoeld, ik ben maar de stagiair.",
]

OUT_OF_OFFICE = [
    "Ik ben afwezig tot en met {day}. Voor dringende zaken kunt u contact opnemen met {colleague} via {colleague}@{company}.nl.",
    "Ik ben met ouderschapsverlof tot {month}. Uw e-mail wordt niet doorgestuurd.",
    "{colleague} is niet meer werkzaam bij {company}. Gelieve uw bericht te sturen naar info@{company}.be.",
    "Deze mailbox wordt niet gelezen. Gelieve niet te antwoorden op dit bericht.",
    "Ik ben op dienstreis tot {day} en heb beperkt toegang tot mijn e-mail. Voor facturen kunt u terecht bij facturatie@{company}.be.",
    "Automatisch antwoord: ik ben ziek en lees mijn mail niet. Ik reageer na mijn herstel.",
    "In verband met de feestdag is ons kantoor gesloten. Vanaf {day} zijn we weer bereikbaar.",
    "Hoi! Ik ben tot {day} met vakantie en lees geen mail. Voor dringende vragen kun je bellen naar 020 123 4567. / I am on holiday until {day}.",
]
