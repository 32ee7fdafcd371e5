"""Polish reply phrasings, development set (second author; never used for training)."""

INTERESTED = [
    "Czy to się integruje z KSeF i z Optimą? Jeśli tak, to chętnie pogadam.",
    "{day} o {time} mi pasuje. Proszę przesłać zaproszenie.",
    "Ile to kosztuje dla ok. 20 użytkowników? Jeśli cena będzie rozsądna, chętnie się przyjrzymy.",
    "Jestem sceptyczny. Czym się różnicie od {comp}?",
    "Czy to działa z Outlookiem? I gdzie są trzymane dane, w UE?",
    "Dodaję {colleague}, naszą {role}, która się tym zajmuje. {colleague}, moim zdaniem warto zerknąć.",
    "Teraz jest u nas młyn, ale proszę się odezwać w {month}, wtedy pogadamy.",
    "Może, zależy od ceny.",
    "Dzien dobry, akurat szukamy czegos takiego. Mozemy umowic prezentacje w przyszlym tygodniu?",
    "Pewnie nie dla nas, ale tak z ciekawości: ile to kosztuje?",
    "Po majówce będzie luźniej, proszę napisać w drugiej połowie maja.",
    "spoko, dzwoń jutro po 14",
]

NOT_INTERESTED = [
    "Dziękuję, ale nie jesteśmy zainteresowani.",
    "Mamy własne narzędzie zbudowane wewnętrznie.",
    "Właśnie podpisaliśmy trzyletnią umowę z {comp}.",
    "Budżet na ten rok już rozpisany, więc niestety nic z tego.",
    "Nie mamy tego w planach, więc dziękujemy.",
    "nie dzieki",
    "Cennika nie trzeba, mamy {comp} i nam wystarcza.",
    "Czwarty mail... Podziwiam wytrwałość, ale odpowiedź nadal brzmi nie.",
    "Na razie nie. Jak będziemy potrzebować, sami się odezwiemy.",
    "No tak, kolejne cudowne narzędzie. Tego nam właśnie brakowało. Nie, dzięki.",
    "Rozmawiałem z {colleague}, nie idziemy w to.",
    "Odpuszczę, testowaliśmy już coś podobnego i nie wypaliło.",
]

UNSUBSCRIBE = [
    "Proszę usunąć mnie z listy.",
    "Nie jestem zainteresowany. Proszę usunąć mój adres z bazy.",
    "Trzeci raz odpisuję, że nie. Proszę dać mi spokój z tymi mailami.",
    "Skąd macie moje dane? Na podstawie RODO żądam usunięcia wszystkich moich danych osobowych.",
    "PRZESTAŃCIE DO MNIE PISAĆ.",
    "Wypisz mnie.",
    "Nie pracuję już w {company}, proszę usunąć ten adres ze swoich list.",
    "Jeszcze jeden mail i zgłaszam to jako spam. Dość.",
    "Nic osobistego, ale proszę mnie wykreślić z tej sekwencji. Jak będziemy czegoś potrzebować, sam się odezwę.",
    "Nie wyrażam zgody na przesyłanie informacji handlowych. Proszę o usunięcie mojego adresu.",
]

OTHER = [
    "A z jakiej firmy Państwo są?",
    "Skąd ma Pan mój adres?",
    "To nie do mnie, proszę pisać do działu zakupów.",
    "Proszę pisać na biuro@{company}.pl.",
    "Przekażę do odpowiedniego działu.",
    "Dzięki.",
    "Przyjęłam do wiadomości.",
    "ok",
    "Link w mailu nie działa.",
    "To jest automat czy pisze do mnie człowiek?",
    "Chyba pomylił Pan firmy, my jesteśmy piekarnią.",
    "Przepraszam, czy my się znamy? Nie rozumiem, o co chodzi.",
    "Dodaję {colleague} do wiadomości.",
    "Już się tym nie zajmuję, przejął to {colleague}.",
    "Chyba nie do mnie, jestem tylko stażystą.",
]

OUT_OF_OFFICE = [
    "Jestem nieobecny do {day} włącznie. W pilnych sprawach proszę kontaktować się z {colleague}: {colleague}@{company}.pl.",
    "Przebywam na urlopie rodzicielskim do {month}. Wiadomość nie zostanie przekazana dalej.",
    "{colleague} nie pracuje już w {company}. Prosimy o kontakt pod adresem biuro@{company}.pl.",
    "Ta skrzynka nie jest monitorowana. Prosimy nie odpowiadać na tę wiadomość.",
    "Przebywam w podróży służbowej do {day} z ograniczonym dostępem do poczty. W sprawach faktur prosimy pisać na faktury@{company}.pl.",
    "Automatyczna odpowiedź: przebywam na zwolnieniu lekarskim. Odpowiem po powrocie.",
    "Z powodu święta nasze biuro jest nieczynne. Wracamy {day}.",
    "Dzień dobry, do {day} przebywam na urlopie wypoczynkowym. W pilnych sprawach proszę dzwonić pod numer 22 123 45 67. / I am on leave until {day}.",
]
