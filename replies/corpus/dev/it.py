"""Italian reply phrasings, development set (second author; never used for training)."""

INTERESTED = [
    "Interessante. Funziona anche con la fatturazione elettronica SDI? Se sì, sentiamoci.",
    "Va bene {day} alle {time}. Mandami pure l'invito.",
    "Quanto costa per una ventina di utenti? Se il prezzo è giusto ne parliamo.",
    "Sono un po' scettico. In cosa siete diversi da {comp}?",
    "Si integra con Outlook? E i dati dove stanno, in Europa?",
    "Metto in copia {colleague}, il nostro {role}, che segue queste cose. {colleague}, secondo me merita un'occhiata.",
    "Adesso è un periodo pieno, ma ricontattami a {month} e ne parliamo volentieri.",
    "Forse, dipende dal prezzo e dai vincoli contrattuali.",
    "Ciao, ottimo tempismo, ci stavamo proprio guardando intorno. Fissiamo una demo?",
    "Probabilmente non fa per noi, ma giusto per curiosità: quanto costa?",
    "Adesso mezzo ufficio è in ferie, ma dopo Ferragosto ne parliamo volentieri. Riscrivimi a settembre.",
    "ok ci sto, giovedì pome?",
]

NOT_INTERESTED = [
    "Grazie, ma non ci interessa.",
    "Abbiamo già uno strumento interno che funziona benissimo.",
    "Abbiamo appena firmato un contratto triennale con {comp}.",
    "Con i tagli di quest'anno non ci sono soldi nemmeno per la carta della stampante. Niente da fare.",
    "Al momento non è una priorità.",
    "Guardi, siamo quattro gatti, non ci serve.",
    "Non serve che mi mandi il listino, con {comp} siamo a posto.",
    "Quarta mail... Complimenti per la costanza, ma la risposta resta no.",
    "Per ora no, semmai vi cerchiamo noi.",
    "Ah certo, proprio quello che ci mancava, un altro strumento miracoloso. No grazie.",
    "Ne ho parlato con {colleague}, non procediamo.",
    "Lasciamo perdere, abbiamo già provato soluzioni simili senza risultati.",
]

UNSUBSCRIBE = [
    "cancellatemi per favore",
    "Non mi interessa. Rimuovete il mio indirizzo dal vostro database.",
    "Vi ho già detto di no tre volte. Smettetela di scrivermi.",
    "Dove avete preso i miei dati? Ai sensi del GDPR chiedo la cancellazione immediata di tutti i miei dati personali.",
    "SMETTETELA DI MANDARMI EMAIL.",
    "Disiscrivetemi.",
    "Non contattate più nessuno di {company}, grazie.",
    "Se ricevo un'altra mail vi segnalo come spam. Basta.",
    "Niente di personale, ma toglietemi dalla sequenza. Se mai ci servirà, vi scrivo io.",
    "Non lavoro più in {company}, per favore rimuovete questo indirizzo dalle vostre liste.",
]

OTHER = [
    "Scusi, ma voi che azienda siete?",
    "Come ha avuto il mio indirizzo?",
    "Non sono la persona giusta, si rivolga all'ufficio acquisti.",
    "Scriva a info@{company}.it per favore.",
    "Giro a chi di competenza.",
    "Grazie.",
    "Preso nota.",
    "ok",
    "Il link nella mail non funziona.",
    "È una mail automatica o c'è una persona dall'altra parte?",
    "Credo abbiate sbagliato azienda, siamo un ristorante.",
    "Scusi, ci conosciamo? Non capisco di cosa si tratta.",
    "Aggiungo {colleague} in copia per conoscenza.",
    "Non mi occupo più di questo, ora se ne occupa {colleague}.",
    "Credo non fosse per me, sono solo lo stagista.",
]

OUT_OF_OFFICE = [
    "Gentile mittente, sarò assente per ferie fino al {day} compreso. Per urgenze contattare {colleague} ({colleague}@{company}.it). / I am on annual leave until {day}.",
    "Sono in congedo di maternità fino a {month}. La sua email non verrà inoltrata.",
    "{colleague} non fa più parte di {company}. Si prega di scrivere a info@{company}.it.",
    "Questa casella di posta non è monitorata. Si prega di non rispondere.",
    "Sono in trasferta fino al {day} con accesso limitato alla posta. Per questioni amministrative scrivere a amministrazione@{company}.it.",
    "Risposta automatica: sono in malattia. Risponderò al mio rientro.",
    "I nostri uffici resteranno chiusi per la festività. Riapriremo il {day}.",
    "Grazie per averci contattato. La sua richiesta è stata registrata con il ticket n. 55812. Le risponderemo entro 2 giorni lavorativi.",
]
