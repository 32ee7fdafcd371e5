"""Italian base phrasings (see en.py for the slots)."""

INTERESTED = [
    "Mi interessa, sentiamoci.",
    "Volentieri, che ne dice di {day} alle {time}?",
    "{day} alle {time} per me va bene.",
    "Mi mandi un invito per {day}.",
    "Potete inviarmi i prezzi?",
    "Quanto costa per un team di 20 persone?",
    "Interessante. Avete una presentazione da condividere?",
    "Vorrei vedere una demo la prossima settimana.",
    "Stiamo cercando proprio qualcosa del genere. Quando è disponibile?",
    "Fissiamo 30 minuti, ecco il mio calendario: https://cal.example.com/incontro",
    "Sono aperto a una chiacchierata. Giovedì pomeriggio?",
    "Come si integra con Salesforce?",
    "C'è una prova gratuita?",
    "Vorremmo provarlo. Come iniziamo?",
    "Se ne occupa la mia collega {colleague}, la metto in copia. {colleague}, vale la pena parlarne.",
    "Inoltro a {colleague}, il nostro {role}, che la contatterà per fissare una call.",
    "Adesso non è il momento, ma mi ricontatti a {month} e ne parliamo volentieri.",
    "Mi riscriva dopo {month} e ci guardiamo con calma.",
    "Il tempismo è perfetto, stiamo valutando fornitori.",
    "Sì, grazie, mi mandi maggiori informazioni.",
    "Si accordi con la mia assistente per un appuntamento.",
    "Sono curioso. Che risultati hanno ottenuto aziende simili?",
    "ok, procediamo",
    "sì",
    "Mi chiami domani mattina al 333 1234567.",
    "Possiamo spostare a {day}? Altrimenti ci sono.",
    "Mi mandi una proposta, la valuto con il team.",
    "Qual è la durata minima del contratto?",
    "In cosa siete diversi da {comp}? Stiamo pensando di cambiare.",
    "Non siamo soddisfatti di {comp}, quindi sì, mi dica di più.",
    "Ho 15 minuti {day}, se le va bene.",
    "Interessata. Può condividere dei casi cliente?",
    "Perché no? Mi proponga un paio di orari.",
    "Quale sarebbe il prezzo per 5 utenti?",
    "Saremmo aperti a un progetto pilota.",
    "Mi piacerebbe vedere come funziona.",
    "Sono in ferie fino a {day}, ma mi interessa: ne parliamo al mio rientro?",
    "Mi riscriva a {month}, avremo il budget.",
    "Con piacere, mi proponga due date.",
    "Dove sono ospitati i dati?",
    "Perfetto, a {day}.",
    "Saremmo interessati a un incontro.",
]

NOT_INTERESTED = [
    "Grazie, ma non ci interessa.",
    "No, grazie.",
    "Non fa per noi.",
    "Usiamo già {comp} e ci troviamo bene.",
    "Siamo già coperti su questo.",
    "Non abbiamo budget per questo, mi spiace.",
    "Non ora, grazie.",
    "Abbiamo appena firmato un contratto triennale con {comp}.",
    "Passo.",
    "Non ne abbiamo bisogno al momento.",
    "L'abbiamo sviluppato internamente, quindi non serve.",
    "Grazie, ma quest'anno non è una priorità.",
    "Siamo troppo piccoli per uno strumento del genere.",
    "Sinceramente non ne vediamo il valore. Grazie comunque.",
    "Non sono interessato.",
    "Il mese scorso abbiamo scelto {comp}.",
    "Non rientra nella nostra strategia.",
    "Non intendiamo cambiare fornitore.",
    "Abbiamo le spese bloccate, mi dispiace.",
    "Non è per noi, in bocca al lupo.",
    "Non credo sia rilevante per quello che facciamo.",
    "Il nostro contratto con {comp} dura altri due anni.",
    "Non esternalizziamo questo tipo di lavoro.",
    "No. Stiamo bene così.",
    "Grazie, restiamo con la soluzione attuale.",
    "Per ora no.",
    "Da parte nostra è un no.",
    "Abbiamo deciso di andare in un'altra direzione.",
    "Il budget dell'anno è già allocato.",
    "Non cerchiamo nuovi strumenti.",
    "Non andremo avanti.",
    "Nessun interesse, grazie.",
    "Magari un'altra volta, adesso no.",
    "Non abbiamo la capacità per questo.",
    "Lavoriamo già con un altro fornitore.",
]

UNSUBSCRIBE = [
    "Per favore, cancellatemi dalla vostra lista.",
    "Disiscrivimi.",
    "Smettete di scrivermi.",
    "Per favore, non contattatemi più.",
    "Non inviate più email a questo indirizzo.",
    "Basta, grazie.",
    "Per favore, niente follow-up.",
    "Non mi sono mai iscritto. Cancellate il mio indirizzo.",
    "Ai sensi del GDPR chiedo la cancellazione di tutti i miei dati.",
    "Cancellate i miei dati personali e datemene conferma.",
    "Dove avete preso la mia email? Cancellatela e non scrivetemi più.",
    "Non mi interessa, e per favore toglietemi dai prossimi invii.",
    "No, grazie. Rimuovetemi, per favore.",
    "Rimuovete i miei recapiti dal vostro database.",
    "Questo è spam. Smettete di mandarmi messaggi.",
    "Non voglio ricevere altre email da voi.",
    "Non scrivermi mai più.",
    "Niente più solleciti, per favore, non siamo interessati.",
    "Toglieteci dalla vostra mailing list.",
    "Cessate ogni contatto.",
    "Disiscrivete tutto il mio team, per favore.",
    "Terza email questa settimana. Basta.",
    "Basta email, per favore.",
    "Toglietemi dal vostro CRM.",
    "L'ho già chiesto: toglietemi dalla lista.",
    "Non contattatemi più.",
    "Cancellami.",
]

OTHER = [
    "Chi è lei?",
    "Come ha avuto il mio indirizzo email?",
    "Non sono la persona giusta.",
    "Persona sbagliata, mi scusi.",
    "Non me ne occupo io, provi con {colleague}.",
    "Meglio scrivere a {colleague}.",
    "Che azienda è?",
    "Ci conosciamo?",
    "Per conoscenza.",
    "Vedi sotto.",
    "Ricevuto, grazie.",
    "Grazie.",
    "Inoltro all'ufficio competente.",
    "Dove ci siamo conosciuti?",
    "È un invio massivo?",
    "Per favore, usi il nostro portale fornitori.",
    "Gli acquisti sono gestiti dalla sede centrale.",
    "Non capisco di cosa si tratti.",
    "Il link nella sua email non funziona.",
    "{colleague} non lavora più qui, sono il suo sostituto.",
    "Di cosa si tratta esattamente?",
    "Chi le ha dato il mio nome?",
    "Sono solo l'assistente di direzione.",
    'Può dirmi a cosa si riferisce?',
    'È una mail automatica?',
    'Per quale sede è?',
    'Metto in copia {colleague} per conoscenza.',
    'La leggo più tardi.',
    'La sua mail è finita nello spam, per sua informazione.',
    'Siamo stati acquisiti, non so chi se ne occupi ora.',
    'Giro la mail.',
    'Chi è Alex?',
    'È una persona vera?',
    'ok',
    'Ricevuto.',
]

OUT_OF_OFFICE = [
    "Sono fuori ufficio fino a {day} con accesso limitato alla posta. Per urgenze contattare {colleague}.",
    "Grazie per il messaggio. Sono in ferie e rientrerò il {day}.",
    "Sarò assente fino a {day}. Risponderò al mio rientro.",
    "Non lavoro più in {company}. Si prega di contattare {colleague}.",
    "Questa casella non è più monitorata.",
    "Sono in congedo parentale fino a {month}.",
    "Sono in trasferta e risponderò al mio ritorno.",
    "Sono in malattia. Per urgenze scrivere a {colleague}.",
    "Risposta automatica: sono in vacanza fino a {day}.",
    "Questo indirizzo non è più attivo.",
    "Ho lasciato l'azienda. Il suo messaggio non verrà letto.",
]

NEUTRAL = ["Grazie per il messaggio.", "Grazie per avermi scritto.", "Spero stia bene.", "Grazie per la mail."]
GREETINGS = ["Ciao {name},", "Buongiorno,", "Gentile {name},", "Salve,", "Buongiorno {name},", "Ciao,"]
SIGNOFFS = ["Cordiali saluti,", "Saluti,", "Grazie,", "Un saluto,", "Distinti saluti,", "A presto,"]
NAMES = ["Giulia Rossi", "Marco Bianchi", "Francesca Romano", "Luca Ricci", "Chiara Greco"]
COLLEAGUES = ["Elena", "Paolo", "Sara", "Andrea"]
ROLES = ["direttore tecnico", "responsabile commerciale", "responsabile marketing"]
DAYS = ["lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "domani"]
TIMES = ["10", "14", "15:30", "9"]
MONTHS = ["gennaio", "marzo", "settembre", "il prossimo trimestre"]
TITLES = ["Amministratore Delegato", "Direttore Vendite", "Responsabile Acquisti"]
QUOTE_HEADERS = ["Il giorno {date} {sender} ha scritto:", "Il {date} alle 10:14 {sender} ha scritto:"]
OUTLOOK_HEADER = "Da: {sender}\nInviato: {date}\nA: {me}\nOggetto: {subject}"
MOBILE = ["Inviato da iPhone", "Inviato dal mio smartphone"]
REPLY_PREFIX = "R: "
AUTO_SUBJECT = ["Risposta automatica: {subject}", "Fuori sede: {subject}"]
SUBJECTS = ["Domanda veloce su {company}", "Un'idea per le vendite di {company}"]
PITCHES = [
    "Ciao {first},\n\nho visto che {company} sta assumendo commerciali. Aiutiamo team come il vostro a fissare il "
    "30% di incontri in più. Avresti 15 minuti la prossima settimana?\n\nA presto,\nAlex",
    "Buongiorno {first},\n\nla nostra piattaforma trova email verificate e gestisce tutta la sequenza. "
    "Le interesserebbe una breve demo?\n\nCordiali saluti,\nAlex",
]
