"""Swedish reply phrasings, development set (second author; never used for training)."""

INTERESTED = [
    "Spännande! Kan ni komma förbi vårt kontor i Göteborg och visa en demo över en fika?",
    "{day} kl {time} funkar. Skicka en inbjudan.",
    "Vad kostar det för ungefär 20 användare? Om priset är rimligt kikar vi gärna.",
    "Jag är lite skeptisk. Vad gör ni bättre än {comp}?",
    "Funkar det med Fortnox? Och ligger datan inom EU?",
    "Jag lägger till {colleague} som är vår {role} och äger den här frågan. {colleague}, kan vara värt att kika på.",
    "Just nu är det fullt upp, men hör av dig i {month} så tar vi ett snack.",
    "Kanske, beror på prislappen.",
    "Tjena! Vi har faktiskt letat efter nåt sånt. Kör vi en demo nästa vecka?",
    "Förmodligen inget för oss, men av ren nyfikenhet: vad kostar det?",
    "Efter industrisemestern har jag mer tid, hör av dig i mitten av augusti.",
    "ja gärna, ring mig imorgon efter lunch",
]

NOT_INTERESTED = [
    "Tack, men vi är inte intresserade.",
    "Vi har byggt något eget internt.",
    "Vi har precis skrivit ett treårsavtal med {comp}.",
    "Budgeten är spikad för i år, så det blir tyvärr inget.",
    "Det står inte på vår agenda, så nej.",
    "nä tack",
    "Ingen prislista behövs, vi har {comp} och det räcker.",
    "Fjärde mejlet... Imponerande envishet, men svaret är fortfarande nej.",
    "Inte just nu. Om behovet dyker upp så hör vi av oss.",
    "Jaha, ännu ett mirakelverktyg. Precis vad vi saknade. Nej tack.",
    "Jag har pratat med {colleague}, vi går inte vidare med det här.",
    "Nä, vi har testat liknande förut och det blev inget.",
]

UNSUBSCRIBE = [
    "Har sagt nej tre gånger nu. Sluta höra av er.",
    "Inte intresserad. Radera min mejladress ur ert register.",
    "Vänligen kontakta mig inte igen.",
    "Var har ni fått mina uppgifter ifrån? Enligt GDPR begär jag att ni raderar alla mina personuppgifter.",
    "SLUTA MEJLA MIG.",
    "Avregistrera.",
    "Kontakta inte heller mina kollegor på {company}.",
    "Ett mejl till så anmäler jag er som spam. Sluta nu.",
    "Inget personligt, men plocka bort mig från sekvensen. Behöver vi nåt sånt hör jag av mig själv.",
    "Jag har slutat på {company}, ta bort den här adressen från era listor.",
]

OTHER = [
    "Vilket företag är ni från egentligen?",
    "Hur fick du tag på min adress?",
    "Jag är fel person, prata med inköp.",
    "Skicka till info@{company}.se istället.",
    "Jag skickar vidare till rätt avdelning.",
    "Tack.",
    "Noterat.",
    "ok",
    "Länken i mejlet funkar inte.",
    "Är det här ett automatiskt utskick eller sitter det en människa där?",
    "Ni har fel företag, vi är ett bageri.",
    "Förlåt, känner vi varandra? Fattar inte vad det här gäller.",
    "Lägger till {colleague} för kännedom.",
    "Jag jobbar inte med det längre, {colleague} har tagit över.",
    "Tror inte det här var till mig, jag är bara praktikant.",
]

OUT_OF_OFFICE = [
    "Jag är ledig till och med {day}. Vid brådskande ärenden, kontakta {colleague} på {colleague}@{company}.se.",
    "Jag är föräldraledig till {month}. Ditt mejl vidarebefordras inte.",
    "{colleague} arbetar inte längre på {company}. Vänligen kontakta info@{company}.se.",
    "Denna brevlåda bevakas inte. Vänligen svara inte på detta mejl.",
    "Jag är på tjänsteresa till och med {day} med begränsad tillgång till e-post. Fakturafrågor skickas till faktura@{company}.se.",
    "Autosvar: Jag är sjukskriven och läser inte mejl. Jag återkommer när jag är tillbaka.",
    "Vårt kontor är stängt på grund av helgdag. Vi är tillbaka {day}.",
    "Hej! Jag har semester till och med {day} och läser inte mejl. Brådskande? Ring växeln på 08-123 45 67. / I am on vacation until {day}.",
]
