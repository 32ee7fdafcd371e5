"""Polish base phrasings (see en.py for the slots)."""

INTERESTED = [
    "Brzmi dobrze, porozmawiajmy.",
    "Chętnie, może {day} o {time}?",
    "{day} o {time} mi pasuje.",
    "Proszę przesłać zaproszenie na {day}.",
    "Czy mogą Państwo przesłać cennik?",
    "Ile to kosztuje dla zespołu 20 osób?",
    "Ciekawe. Czy ma Pan krótką prezentację?",
    "Chętnie zobaczę demo w przyszłym tygodniu.",
    "Szukamy właśnie czegoś takiego. Kiedy ma Pan czas?",
    "Umówmy się na 30 minut, tu jest mój kalendarz: https://cal.example.com/spotkanie",
    "Jestem otwarty na rozmowę. Czwartek po południu?",
    "Jak wygląda integracja z Salesforce?",
    "Czy jest darmowy okres próbny?",
    "Chcemy to przetestować. Jak zacząć?",
    "Tym zajmuje się moja koleżanka {colleague}, dodaję ją do wiadomości. {colleague}, warto porozmawiać.",
    "Przekazuję do {colleague}, naszego {role}, który odezwie się, żeby umówić spotkanie.",
    "Teraz nie jest dobry moment, ale proszę odezwać się w {month}, wtedy porozmawiamy.",
    "Proszę wrócić do mnie po {month}, wtedy przyjrzymy się temu.",
    "Idealny moment, właśnie analizujemy dostawców.",
    "Tak, poproszę więcej informacji.",
    "Proszę umówić termin z moją asystentką.",
    "Jestem ciekaw. Jakie wyniki osiągnęły podobne firmy?",
    "ok, działajmy",
    "tak",
    "Proszę zadzwonić jutro rano: 601 234 567.",
    "Czy możemy przesunąć na {day}? Jeśli nie, wchodzę w to.",
    "Proszę przesłać ofertę, omówię ją z zespołem.",
    "Jaki jest minimalny okres umowy?",
    "Czym różnicie się od {comp}? Rozważamy zmianę.",
    "Nie jesteśmy zadowoleni z {comp}, więc tak, proszę o więcej szczegółów.",
    "Mam 15 minut {day}, jeśli Panu pasuje.",
    "Jestem zainteresowana. Czy może Pan podesłać case studies?",
    "Czemu nie. Proszę zaproponować kilka terminów.",
    "Jaka byłaby cena dla 5 użytkowników?",
    "Jesteśmy otwarci na pilotaż.",
    "Chętnie zobaczę, jak to działa.",
    "Jestem na urlopie do {day}, ale to mnie interesuje: porozmawiamy po moim powrocie?",
    "Proszę napisać ponownie w {month}, wtedy będzie budżet.",
    "Z przyjemnością, proszę zaproponować dwa terminy.",
    "Gdzie przechowywane są dane?",
    "Super, do zobaczenia {day}.",
    "Jesteśmy zainteresowani spotkaniem.",
]

NOT_INTERESTED = [
    "Dziękuję, ale nie jesteśmy zainteresowani.",
    "Nie, dziękuję.",
    "To nie dla nas.",
    "Korzystamy już z {comp} i jesteśmy zadowoleni.",
    "Mamy to już załatwione.",
    "Nie mamy na to budżetu, przykro mi.",
    "Nie teraz, dziękuję.",
    "Właśnie podpisaliśmy trzyletnią umowę z {comp}.",
    "Podziękuję.",
    "Obecnie tego nie potrzebujemy.",
    "Zbudowaliśmy to sami, więc nie ma potrzeby.",
    "Dziękuję, ale w tym roku to nie jest priorytet.",
    "Jesteśmy za mali na takie narzędzie.",
    "Szczerze mówiąc, nie widzimy wartości. Mimo to dziękuję.",
    "Nie jestem zainteresowany.",
    "W zeszłym miesiącu wybraliśmy {comp}.",
    "To nie pasuje do naszej strategii.",
    "Nie planujemy zmiany dostawcy.",
    "Mamy zamrożone wydatki, niestety.",
    "Nie dla nas, powodzenia.",
    "Nie sądzę, żeby to było dla nas istotne.",
    "Nasza umowa z {comp} obowiązuje jeszcze dwa lata.",
    "Nie zlecamy takich prac na zewnątrz.",
    "Nie. Jest dobrze tak, jak jest.",
    "Dziękuję, zostajemy przy obecnym rozwiązaniu.",
    "Na razie nie.",
    "Z naszej strony to odmowa.",
    "Zdecydowaliśmy się na inne rozwiązanie.",
    "Tegoroczny budżet jest już rozdysponowany.",
    "Nie szukamy nowych narzędzi.",
    "Nie będziemy tego kontynuować.",
    "Może innym razem, nie teraz.",
    "Nie mamy na to zasobów.",
    "Współpracujemy już z innym dostawcą.",
    "Brak zainteresowania, dziękuję.",
]

UNSUBSCRIBE = [
    "Proszę usunąć mnie z listy.",
    "Wypisz mnie.",
    "Proszę przestać do mnie pisać.",
    "Proszę więcej się ze mną nie kontaktować.",
    "Proszę nie wysyłać więcej wiadomości na ten adres.",
    "Proszę przestać.",
    "Proszę nie ponawiać kontaktu.",
    "Nigdy się nie zapisywałem. Proszę usunąć mój adres.",
    "Na podstawie RODO żądam usunięcia wszystkich moich danych.",
    "Proszę usunąć moje dane osobowe i to potwierdzić.",
    "Skąd macie mój adres? Proszę go usunąć i więcej nie pisać.",
    "Nie jestem zainteresowany i proszę usunąć mnie z przyszłych wysyłek.",
    "Nie, dziękuję. Proszę mnie wypisać.",
    "Proszę usunąć moje dane kontaktowe z bazy.",
    "To jest spam. Przestańcie wysyłać mi wiadomości.",
    "Nie chcę otrzymywać od was więcej maili.",
    "Nigdy więcej do mnie nie pisz.",
    "Proszę o brak kolejnych przypomnień, nie jesteśmy zainteresowani.",
    "Proszę usunąć nas z listy mailingowej.",
    "Proszę zaprzestać wszelkiego kontaktu.",
    "Proszę wypisać mnie i mój zespół.",
    "Trzeci mail w tym tygodniu. Dość.",
    "Koniec z mailami, proszę.",
    "Proszę usunąć mnie z waszego CRM.",
    "Prosiłem już wcześniej: usuńcie mnie z listy.",
    "Rezygnuję z subskrypcji.",
]

OTHER = [
    "Kim Pan jest?",
    "Skąd ma Pan mój adres e-mail?",
    "Nie jestem właściwą osobą.",
    "Zła osoba, przepraszam.",
    "To nie mój zakres, proszę spróbować u {colleague}.",
    "Lepiej napisać do {colleague}.",
    "Jaka to firma?",
    "Czy my się znamy?",
    "Do wiadomości.",
    "Patrz niżej.",
    "Otrzymałem, dziękuję.",
    "Dzięki.",
    "Przekażę do właściwego działu.",
    "Gdzie się poznaliśmy?",
    "Czy to masowa wysyłka?",
    "Proszę skorzystać z naszego portalu dostawców.",
    "Zakupami zajmuje się centrala.",
    "Nie rozumiem, o co chodzi.",
    "Link w Pana mailu nie działa.",
    "{colleague} już tu nie pracuje, jestem jego następcą.",
    "O co dokładnie chodzi?",
    "Kto podał Panu moje nazwisko?",
    'Jestem tylko asystentką zarządu.',
    'Czy może Pan napisać, czego to dotyczy?',
    'Czy to automatyczna wiadomość?',
    'Dla którego oddziału to jest?',
    'Dodaję {colleague} do wiadomości.',
    'Przeczytam później.',
    'Pana mail trafił do spamu, tak tylko informuję.',
    'Zostaliśmy przejęci, nie wiem, kto się tym teraz zajmuje.',
    'Przekażę dalej.',
    'Kim jest Alex?',
    'Czy jest Pan prawdziwą osobą?',
    'ok',
    'Otrzymane.',
]

OUT_OF_OFFICE = [
    "Jestem poza biurem do {day} z ograniczonym dostępem do poczty. W pilnych sprawach proszę kontaktować się z {colleague}.",
    "Dziękuję za wiadomość. Jestem na urlopie i wracam {day}.",
    "Jestem nieobecny do {day}. Odpowiem po powrocie.",
    "Nie pracuję już w {company}. Proszę kontaktować się z {colleague}.",
    "Ta skrzynka nie jest już monitorowana.",
    "Jestem na urlopie rodzicielskim do {month}.",
    "Jestem w podróży służbowej i odpowiem po powrocie.",
    "Jestem na zwolnieniu lekarskim. W pilnych sprawach proszę pisać do {colleague}.",
    "Odpowiedź automatyczna: jestem na urlopie do {day}.",
    "Ten adres nie jest już używany.",
    "Odszedłem z firmy. Wiadomość nie zostanie przeczytana.",
]

NEUTRAL = ["Dziękuję za wiadomość.", "Dzięki za maila.", "Mam nadzieję, że wszystko w porządku."]
GREETINGS = ["Dzień dobry,", "Witam,", "Cześć {name},", "Szanowny Panie,", "Dzień dobry Panie {last},", "Hej,"]
SIGNOFFS = ["Pozdrawiam,", "Z poważaniem,", "Pozdrawiam serdecznie,", "Dziękuję,", "Pozdr.", "Miłego dnia,"]
NAMES = ["Anna Kowalska", "Piotr Nowak", "Katarzyna Wiśniewska", "Tomasz Wójcik", "Magdalena Kamińska"]
COLLEAGUES = ["Agnieszki", "Marka", "Ewy", "Pawła"]
ROLES = ["dyrektora IT", "kierownika sprzedaży", "szefa marketingu"]
DAYS = ["poniedziałek", "wtorek", "środę", "czwartek", "piątek", "jutro"]
TIMES = ["10:00", "14:00", "15:30", "9:00"]
MONTHS = ["styczniu", "marcu", "wrześniu", "przyszłym kwartale"]
TITLES = ["Prezes Zarządu", "Dyrektor Sprzedaży", "Kierownik IT"]
QUOTE_HEADERS = ["W dniu {date} {sender} napisał:", "{date} {sender} napisał(a):", "Dnia {date} {sender} pisze:"]
OUTLOOK_HEADER = "Od: {sender}\nWysłano: {date}\nDo: {me}\nTemat: {subject}"
MOBILE = ["Wysłane z iPhone'a", "Wysłane z mojego telefonu"]
REPLY_PREFIX = "Odp: "
AUTO_SUBJECT = ["Odpowiedź automatyczna: {subject}", "Poza biurem: {subject}"]
SUBJECTS = ["Krótkie pytanie o {company}", "Pomysł na sprzedaż w {company}"]
PITCHES = [
    "Dzień dobry {first},\n\nwidzę, że {company} rekrutuje handlowców. Pomagamy zespołom takim jak Państwa "
    "umawiać o 30% więcej spotkań. Czy znajdzie Pan 15 minut w przyszłym tygodniu?\n\nPozdrawiam,\nAlex",
    "Cześć {first},\n\nnasza platforma znajduje zweryfikowane adresy i prowadzi całą sekwencję. "
    "Czy krótkie demo byłoby interesujące?\n\nPozdrawiam,\nAlex",
]
