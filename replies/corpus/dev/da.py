"""Danish reply phrasings, development set (second author; never used for training)."""

INTERESTED = [
    "Fedt, det er faktisk lige noget vi har savnet. Har I tid til et kort møde på Teams?",
    "{day} kl. {time} passer fint. Send en invitation.",
    "Hvad koster det for ca. 20 brugere? Hvis prisen er fornuftig, kigger vi gerne på det.",
    "Jeg er lidt skeptisk. Hvad gør I bedre end {comp}?",
    "Virker det med e-conomic? Og ligger data i EU?",
    "Jeg sætter {colleague} på, vores {role}, som har ansvaret for det. {colleague}, det her er værd at se på.",
    "Det passer dårligt lige nu, men skriv til mig igen i {month}, så tager vi den.",
    "Måske, det kommer an på prisen.",
    "Hej, det lyder faktisk relevant for os. Kan I vise en demo i næste uge?",
    "Nok ikke noget for os, men bare af nysgerrighed: hvad koster det?",
    "Efter sommerferien har jeg bedre tid. Skriv igen i uge 33, så finder vi en dag.",
    "ja tak, ring mig i morgen efter frokost",
]

NOT_INTERESTED = [
    "Tak, men vi er ikke interesserede.",
    "Vi har bygget vores eget internt.",
    "Vi har lige skrevet under på en treårig aftale med {comp}.",
    "Budgettet er lagt for i år, så det bliver desværre ikke til noget.",
    "Det er ikke noget vi har fokus på, så nej tak.",
    "nej tak, vi er good",
    "Ingen grund til at sende priser, vi er godt kørende med {comp}.",
    "Fjerde mail... Imponerende ihærdighed, men svaret er stadig nej.",
    "Ikke lige nu. Hvis vi får behov, kontakter vi jer.",
    "Nå, endnu et mirakelværktøj. Lige hvad vi manglede. Nej tak.",
    "Jeg har talt med {colleague}, vi går ikke videre med det.",
    "Nej, vi har prøvet noget lignende før, og det blev ikke til noget.",
]

UNSUBSCRIBE = [
    "Fjern mig fra jeres liste.",
    "Ikke interesseret. Slet min mailadresse fra jeres database.",
    "Jeg har sagt nej tre gange nu. Lad være med at skrive igen.",
    "Hvor har I mine oplysninger fra? I henhold til GDPR beder jeg jer slette alle mine personoplysninger.",
    "STOP MED AT SKRIVE TIL MIG.",
    "Afmeld.",
    "Kontakt heller ikke mine kolleger hos {company}.",
    "En mail mere, og jeg anmelder jer for spam. Stop nu.",
    "Intet personligt, men tag mig ud af sekvensen. Hvis vi får brug for noget, vender jeg selv tilbage.",
    "Jeg er stoppet hos {company}, fjern venligst denne adresse fra jeres lister.",
]

OTHER = [
    "Hvilket firma er I fra egentlig?",
    "Hvordan har du fået min adresse?",
    "Jeg er ikke den rette, tal med indkøb.",
    "Send det til info@{company}.dk i stedet.",
    "Jeg sender den videre til den rette afdeling.",
    "Tak.",
    "Noteret.",
    "ok",
    "Linket i mailen virker ikke.",
    "Er det her en automatisk mail, eller sidder der et menneske i den anden ende?",
    "I har fat i den forkerte virksomhed, vi er et bageri.",
    "Undskyld, kender vi hinanden? Jeg forstår ikke helt hvad det drejer sig om.",
    "Sætter {colleague} på cc til orientering.",
    "Jeg arbejder ikke med det længere, {colleague} har overtaget.",
    "Tror ikke den her var til mig, jeg er bare praktikant.",
]

OUT_OF_OFFICE = [
    "Jeg er fraværende til og med {day}. I hastende sager kontakt venligst {colleague} på {colleague}@{company}.dk.",
    "Jeg er på barsel indtil {month}. Din mail bliver ikke videresendt.",
    "{colleague} er ikke længere ansat hos {company}. Kontakt venligst info@{company}.dk.",
    "Denne postkasse overvåges ikke. Svar venligst ikke på denne mail.",
    "Jeg er på forretningsrejse til og med {day} med begrænset adgang til mail. Spørgsmål om fakturaer sendes til faktura@{company}.dk.",
    "Autosvar: Jeg er sygemeldt og læser ikke mails. Jeg vender tilbage, når jeg er rask.",
    "Vores kontor er lukket på grund af helligdag. Vi er tilbage {day}.",
    "Hej! Jeg holder ferie til og med {day} og læser ikke mails. Haster det, så ring på 33 12 34 56. / I am on holiday until {day}.",
]
