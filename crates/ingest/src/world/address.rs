//! Street addresses in the country's own pattern: its street names (Hauptstraße, Rue de la
//! République, ulitsa Lenina, Jalan Merdeka), where the house number goes (before or after the
//! street, after "No." or "nr."), and the number's size (a German house number is rarely in
//! the thousands; an American one often is). A line is what Foursquare and Overture print whole;
//! OpenStreetMap and AllThePlaces split it into `addr:street` and `addr:housenumber`, so the
//! line remembers where each part lies.
//!
//! The names are those found in many towns of the country (a Main Street, a Rue de la Gare, a
//! Jalan Merdeka), not one city's landmarks, since any store of the country can draw any of them.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A store's street address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// The whole line: "Hauptstraße 12", "12 Rue de la Gare", "1-4-7 Chūō".
    pub line: String,
    street: (u16, u16),
    number: (u16, u16),
}

impl Address {
    /// The street part alone, as OpenStreetMap's `addr:street` holds it.
    pub fn street(&self) -> &str {
        &self.line[usize::from(self.street.0)..usize::from(self.street.1)]
    }

    /// The house number alone (`addr:housenumber`): "12", "1-4-7", "10-07".
    pub fn number(&self) -> &str {
        &self.line[usize::from(self.number.0)..usize::from(self.number.1)]
    }
}

/// Builds a line from its parts in order, noting where the street and the number fall.
#[derive(Default)]
struct Line {
    line: String,
    street: (u16, u16),
    number: (u16, u16),
}

impl Line {
    fn text(mut self, s: &str) -> Line {
        self.line.push_str(s);
        self
    }

    fn span(&mut self, s: &str) -> (u16, u16) {
        let start = self.line.len();
        self.line.push_str(s);
        // A line is a few dozen bytes: the pools below hold nothing near 64 KiB.
        (start as u16, self.line.len() as u16)
    }

    fn street(mut self, s: &str) -> Line {
        self.street = self.span(s);
        self
    }

    fn number(mut self, n: impl std::fmt::Display) -> Line {
        self.number = self.span(&n.to_string());
        self
    }

    fn done(self) -> Address {
        Address { line: self.line, street: self.street, number: self.number }
    }
}

/// How many street names a draw chooses among: every pool is read through this many slots, so
/// that the draws stay those of the first version of this module (below).
const SLOTS: usize = 30;

/// The United States (and Canada and Puerto Rico, whose English-speaking streets look alike).
const US: [&str; SLOTS] = [
    "Main",
    "Oak",
    "Maple",
    "Cedar",
    "Park",
    "Lake",
    "Hill",
    "Church",
    "Market",
    "King",
    "Queen",
    "Station",
    "Mill",
    "River",
    "Bridge",
    "High",
    "Victoria",
    "Washington",
    "Lincoln",
    "Jackson",
    "Franklin",
    "Madison",
    "Central",
    "Garden",
    "Spring",
    "Elm",
    "Pine",
    "North",
    "South",
    "Harbour",
];
const US_SUFFIX: [&str; 5] = ["St", "Ave", "Rd", "Blvd", "Dr"];
/// Quebec's streets, in French: the number first, then a comma, as Canada Post writes it.
const QUEBEC: &[&str] = &[
    "rue Principale",
    "rue Notre-Dame",
    "rue Saint-Jean",
    "rue Saint-Joseph",
    "rue Saint-Pierre",
    "rue de l'Église",
    "rue Saint-Louis",
    "rue Sainte-Anne",
    "rue Saint-Georges",
    "rue Saint-Paul",
    "rue du Couvent",
    "rue Champlain",
    "boulevard Laurier",
    "chemin du Lac",
    "rue des Érables",
];
/// Britain, Ireland, Australia, New Zealand, South Africa and the Crown dependencies.
const BRITISH: &[&str] = &[
    "High Street",
    "Station Road",
    "Church Street",
    "Victoria Road",
    "Park Road",
    "London Road",
    "Mill Lane",
    "King Street",
    "Queen Street",
    "Market Street",
    "Bridge Street",
    "North Road",
    "New Road",
    "Manor Road",
    "School Lane",
    "Green Lane",
    "Chapel Street",
    "Albert Road",
    "Windsor Road",
    "York Road",
    "Grange Road",
    "George Street",
    "Castle Street",
    "Alexandra Road",
    "Richmond Road",
    "West Street",
    "Main Street",
    "Broadway",
    "The Parade",
    "Church Road",
];
const GERMAN: &[&str] = &[
    "Hauptstraße",
    "Bahnhofstraße",
    "Schulstraße",
    "Gartenstraße",
    "Dorfstraße",
    "Bergstraße",
    "Kirchstraße",
    "Lindenstraße",
    "Waldstraße",
    "Ringstraße",
    "Goethestraße",
    "Schillerstraße",
    "Mozartstraße",
    "Feldstraße",
    "Wiesenstraße",
    "Poststraße",
    "Marktplatz",
    "Mühlenweg",
    "Birkenweg",
    "Sonnenstraße",
    "Industriestraße",
    "Rosenstraße",
    "Buchenweg",
    "Eichenweg",
    "Jahnstraße",
    "Beethovenstraße",
    "Friedrichstraße",
    "Blumenstraße",
    "Parkstraße",
    "Kaiserstraße",
];
const FRENCH: &[&str] = &[
    "Rue de la République",
    "Rue Victor Hugo",
    "Avenue Jean Jaurès",
    "Rue Pasteur",
    "Rue de la Gare",
    "Place de l'Église",
    "Rue Gambetta",
    "Avenue du Général de Gaulle",
    "Rue des Écoles",
    "Rue du Moulin",
    "Rue Nationale",
    "Boulevard Voltaire",
    "Rue de Paris",
    "Rue du Château",
    "Avenue de la Libération",
    "Rue Jean Moulin",
    "Rue de la Paix",
    "Grande Rue",
    "Rue du Commerce",
    "Avenue Foch",
    "Rue Carnot",
    "Rue de la Mairie",
    "Rue des Lilas",
    "Boulevard de la Liberté",
    "Rue du Stade",
    "Rue Émile Zola",
    "Rue du Marché",
    "Rue Saint-Martin",
    "Rue de Verdun",
    "Avenue de la Gare",
];
const DUTCH: &[&str] = &[
    "Kerkstraat",
    "Schoolstraat",
    "Molenstraat",
    "Dorpsstraat",
    "Stationsstraat",
    "Julianastraat",
    "Wilhelminastraat",
    "Beatrixstraat",
    "Nieuwstraat",
    "Markt",
    "Hoofdstraat",
    "Marktstraat",
    "Prins Bernhardstraat",
    "Emmastraat",
    "Oranjestraat",
    "Kastanjelaan",
    "Eikenlaan",
    "Parallelweg",
    "Industrieweg",
    "Raadhuisstraat",
    "Lindelaan",
    "Sportlaan",
    "Havenstraat",
    "Prinses Irenestraat",
    "Steenweg",
    "Julianalaan",
    "Kloosterstraat",
    "Brugstraat",
    "Veldstraat",
    "Zandstraat",
];
const ITALIAN: &[&str] = &[
    "Via Roma",
    "Via Giuseppe Garibaldi",
    "Via Giuseppe Mazzini",
    "Corso Vittorio Emanuele II",
    "Via Cavour",
    "Via Dante Alighieri",
    "Via Guglielmo Marconi",
    "Via Giacomo Matteotti",
    "Piazza della Repubblica",
    "Corso Italia",
    "Via Nazionale",
    "Via XX Settembre",
    "Via Milano",
    "Via Torino",
    "Via Venezia",
    "Via San Francesco",
    "Via della Libertà",
    "Viale Europa",
    "Via Giuseppe Verdi",
    "Via Alessandro Manzoni",
    "Via Cesare Battisti",
    "Via IV Novembre",
    "Via Aldo Moro",
    "Via Antonio Gramsci",
    "Via Giacomo Leopardi",
    "Via Giacomo Puccini",
    "Via dei Mille",
    "Viale della Stazione",
    "Via Vittorio Veneto",
    "Via Trieste",
];
const SPANISH: &[&str] = &[
    "Calle Mayor",
    "Calle Real",
    "Avenida de la Constitución",
    "Calle San Juan",
    "Plaza Mayor",
    "Calle del Carmen",
    "Avenida de Andalucía",
    "Calle Nueva",
    "Calle de la Iglesia",
    "Gran Vía",
    "Avenida de España",
    "Calle del Sol",
    "Calle de Cervantes",
    "Calle Santiago",
    "Avenida del Mar",
    "Calle Luna",
    "Calle Ancha",
    "Calle Ramón y Cajal",
    "Avenida de la Libertad",
    "Calle del Pilar",
    "Calle Colón",
    "Avenida de Europa",
    "Calle San Francisco",
    "Calle del Castillo",
    "Calle de la Paz",
    "Paseo Marítimo",
    "Calle Doctor Fleming",
    "Avenida de Madrid",
    "Calle Hernán Cortés",
    "Calle Lepanto",
];
const MEXICAN: &[&str] = &[
    "Avenida Juárez",
    "Calle Hidalgo",
    "Avenida Morelos",
    "Calle Allende",
    "Avenida Insurgentes",
    "Calle Guerrero",
    "Avenida Revolución",
    "Calle 5 de Mayo",
    "Avenida Reforma",
    "Calle Zaragoza",
    "Avenida Independencia",
    "Calle Madero",
    "Calle Aldama",
    "Avenida Constitución",
    "Calle Matamoros",
];
/// Spanish-speaking America beyond Mexico and Colombia.
const LATIN: &[&str] = &[
    "Avenida San Martín",
    "Calle Bolívar",
    "Avenida Libertador",
    "Calle Sucre",
    "Avenida Colón",
    "Calle Belgrano",
    "Avenida Principal",
    "Calle Comercio",
    "Avenida Central",
    "Calle Independencia",
    "Avenida Bolívar",
    "Calle Real",
    "Calle Junín",
    "Avenida Miraflores",
    "Calle Libertad",
];
const PORTUGUESE: &[&str] = &[
    "Rua da Liberdade",
    "Avenida da República",
    "Rua Direita",
    "Rua de Santo António",
    "Avenida 25 de Abril",
    "Rua do Comércio",
    "Rua Nova",
    "Largo da Igreja",
    "Rua da Escola",
    "Rua 5 de Outubro",
    "Avenida dos Combatentes",
    "Rua Miguel Bombarda",
    "Rua de São João",
    "Rua da Estação",
    "Avenida Luís de Camões",
];
const BRAZILIAN: &[&str] = &[
    "Rua XV de Novembro",
    "Avenida Brasil",
    "Rua Sete de Setembro",
    "Rua Tiradentes",
    "Avenida Getúlio Vargas",
    "Rua São Paulo",
    "Rua Rio Branco",
    "Avenida Presidente Vargas",
    "Rua Santos Dumont",
    "Rua Dom Pedro II",
    "Rua Duque de Caxias",
    "Rua Marechal Deodoro",
    "Rua Barão do Rio Branco",
    "Avenida Independência",
    "Rua das Flores",
];
/// Polish streets are named without their "ul." in OpenStreetMap; squares and avenues whole.
const POLISH: &[&str] = &[
    "ul. Mickiewicza",
    "ul. Słowackiego",
    "ul. Kościuszki",
    "ul. Długa",
    "ul. Polna",
    "ul. Leśna",
    "ul. Ogrodowa",
    "ul. Lipowa",
    "ul. Szkolna",
    "ul. Kwiatowa",
    "ul. Sienkiewicza",
    "ul. Kolejowa",
    "ul. Krótka",
    "Aleja Jana Pawła II",
    "ul. Piłsudskiego",
    "ul. Dworcowa",
    "ul. Słoneczna",
    "ul. Zielona",
    "ul. Żeromskiego",
    "ul. Kopernika",
    "Rynek",
    "ul. Wojska Polskiego",
    "ul. 3 Maja",
    "ul. Kościelna",
    "ul. Parkowa",
    "ul. Chopina",
    "ul. Warszawska",
    "Plac Wolności",
    "ul. Mostowa",
    "ul. Nowa",
];
const CZECH: &[&str] = &[
    "Hlavní",
    "Nádražní",
    "Masarykova",
    "Školní",
    "Komenského",
    "Husova",
    "Palackého",
    "Zahradní",
    "Nová",
    "Krátká",
    "Sokolská",
    "Havlíčkova",
    "Jiráskova",
    "Tyršova",
    "Smetanova",
];
const SLOVAK: &[&str] = &[
    "Hlavná",
    "Štúrova",
    "Hviezdoslavova",
    "Školská",
    "Záhradná",
    "Nová",
    "Krátka",
    "Mierová",
    "Partizánska",
    "Družstevná",
    "Poštová",
    "Kostolná",
    "Lipová",
    "Slnečná",
    "Športová",
];
const HUNGARIAN: &[&str] = &[
    "Kossuth Lajos utca",
    "Petőfi Sándor utca",
    "Rákóczi út",
    "Dózsa György út",
    "Ady Endre utca",
    "Arany János utca",
    "Jókai Mór utca",
    "Szabadság tér",
    "Fő utca",
    "Béke utca",
    "Táncsics Mihály utca",
    "Bajcsy-Zsilinszky út",
    "Széchenyi utca",
    "Deák Ferenc utca",
    "Vasút utca",
];
const ROMANIAN: &[&str] = &[
    "Strada Mihai Eminescu",
    "Bulevardul Unirii",
    "Strada Republicii",
    "Strada Mihai Viteazu",
    "Calea Victoriei",
    "Strada Independenței",
    "Strada Libertății",
    "Bulevardul Revoluției",
    "Strada Gării",
    "Strada Avram Iancu",
    "Bulevardul 1 Decembrie 1918",
    "Strada Ștefan cel Mare",
    "Strada Florilor",
    "Strada Școlii",
    "Bulevardul Independenței",
];
const SWEDISH: &[&str] = &[
    "Storgatan",
    "Drottninggatan",
    "Kungsgatan",
    "Järnvägsgatan",
    "Skolgatan",
    "Kyrkogatan",
    "Stationsgatan",
    "Nygatan",
    "Ringvägen",
    "Parkvägen",
    "Torggatan",
    "Hamngatan",
    "Industrivägen",
    "Bangårdsgatan",
    "Köpmangatan",
];
const NORWEGIAN: &[&str] = &[
    "Storgata",
    "Kirkegata",
    "Kongens gate",
    "Dronningens gate",
    "Jernbanegata",
    "Skolegata",
    "Torggata",
    "Sjøgata",
    "Strandgata",
    "Industriveien",
    "Kirkeveien",
    "Parkveien",
    "Stasjonsveien",
    "Havnegata",
    "Nygata",
];
const DANISH: &[&str] = &[
    "Vestergade",
    "Østergade",
    "Nørregade",
    "Søndergade",
    "Algade",
    "Jernbanegade",
    "Storegade",
    "Kirkegade",
    "Skolegade",
    "Torvet",
    "Industrivej",
    "Hovedgaden",
    "Stationsvej",
    "Bredgade",
    "Strandvejen",
];
const FINNISH: &[&str] = &[
    "Kauppakatu",
    "Koulukatu",
    "Kirkkokatu",
    "Asemakatu",
    "Puistokatu",
    "Rantakatu",
    "Teollisuustie",
    "Keskuskatu",
    "Torikatu",
    "Kauppatie",
    "Rautatienkatu",
    "Kuninkaankatu",
    "Satamakatu",
    "Urheilukatu",
    "Kirkkotie",
];
/// Russian, as Belarus and Kazakhstan's cities write it too, transliterated as the brand names
/// are: the street's kind ("ulitsa") is part of its name in OpenStreetMap.
const RUSSIAN: &[&str] = &[
    "ulitsa Lenina",
    "prospekt Mira",
    "Sovetskaya ulitsa",
    "ulitsa Gagarina",
    "ulitsa Pushkina",
    "Tsentralnaya ulitsa",
    "Molodyozhnaya ulitsa",
    "Shkolnaya ulitsa",
    "ulitsa Kirova",
    "ulitsa Karla Marksa",
    "Oktyabrskaya ulitsa",
    "Komsomolskaya ulitsa",
    "Naberezhnaya ulitsa",
    "Sadovaya ulitsa",
    "prospekt Lenina",
];
const UKRAINIAN: &[&str] = &[
    "vulytsia Shevchenka",
    "vulytsia Ivana Franka",
    "vulytsia Hrushevskoho",
    "prospekt Svobody",
    "vulytsia Soborna",
    "vulytsia Tsentralna",
    "vulytsia Shkilna",
    "vulytsia Sadova",
    "vulytsia Lesi Ukrainky",
    "vulytsia Nezalezhnosti",
];
const GREEK: &[&str] = &[
    "Eleftheriou Venizelou",
    "Ermou",
    "25is Martiou",
    "28is Oktovriou",
    "Ethnikis Antistaseos",
    "Agiou Nikolaou",
    "Agiou Georgiou",
    "Kolokotroni",
    "Karaiskaki",
    "Miaouli",
];
const TURKISH: &[&str] = &[
    "Atatürk Caddesi",
    "Cumhuriyet Caddesi",
    "İnönü Caddesi",
    "İstiklal Caddesi",
    "Gazi Bulvarı",
    "Fevzi Çakmak Caddesi",
    "Mimar Sinan Caddesi",
    "Hürriyet Caddesi",
    "Kazım Karabekir Caddesi",
    "Cumhuriyet Bulvarı",
    "Mevlana Caddesi",
    "Atatürk Bulvarı",
    "Gazi Caddesi",
    "Millet Caddesi",
    "Zafer Caddesi",
];
/// Japan's addresses name a district and its block numbers, not a street: districts every
/// city has (a Chūō, a Honchō, an Ekimae).
const JAPANESE: &[&str] = &[
    "Honchō",
    "Chūō",
    "Sakaemachi",
    "Motomachi",
    "Ekimae",
    "Midorichō",
    "Saiwaichō",
    "Kotobukichō",
    "Asahimachi",
    "Shinmachi",
    "Nakachō",
    "Minamimachi",
    "Ōtemachi",
    "Sakuramachi",
    "Shōwachō",
];
const KOREAN: &[&str] = &["Jungang-ro", "Munhwa-ro", "Chungmu-ro", "Hwarang-ro", "Gongdan-ro", "Sijang-gil"];
const CHINESE: &[&str] = &[
    "Renmin Road",
    "Zhongshan Road",
    "Jiefang Road",
    "Jianshe Road",
    "Heping Road",
    "Xinhua Road",
    "Wenhua Road",
    "Beijing Road",
    "Dongfeng Road",
    "Shengli Road",
];
const TAIWANESE: &[&str] = &[
    "Zhongshan Rd.",
    "Zhongzheng Rd.",
    "Minsheng Rd.",
    "Minzu Rd.",
    "Zhonghua Rd.",
    "Minquan Rd.",
    "Fuxing Rd.",
    "Jianguo Rd.",
    "Heping Rd.",
    "Guangfu Rd.",
    "Chenggong Rd.",
    "Zhongxiao Rd.",
    "Ren'ai Rd.",
    "Xinyi Rd.",
    "Daxue Rd.",
];
const HONG_KONG: &[&str] = &["Nathan Road", "Queen's Road Central", "Hennessy Road", "King's Road", "Des Voeux Road Central", "Castle Peak Road"];
const THAI: &[&str] = &["Phahonyothin Road", "Sukhumvit Road", "Phetkasem Road", "Mittraphap Road", "Ratchadamnoen Road"];
const INDONESIAN: &[&str] = &[
    "Jalan Jenderal Sudirman",
    "Jalan Ahmad Yani",
    "Jalan Diponegoro",
    "Jalan Gajah Mada",
    "Jalan Pahlawan",
    "Jalan Merdeka",
    "Jalan Imam Bonjol",
    "Jalan Gatot Subroto",
    "Jalan Hayam Wuruk",
    "Jalan Veteran",
    "Jalan Pemuda",
    "Jalan Teuku Umar",
];
const MALAY: &[&str] = &[
    "Jalan Besar",
    "Jalan Sultan",
    "Jalan Merdeka",
    "Jalan Masjid",
    "Jalan Stesen",
    "Jalan Pasar",
    "Jalan Raja",
    "Jalan Bukit",
    "Jalan Kampung",
    "Jalan Tun Razak",
];
const SINGAPOREAN: &[&str] = &[
    "Orchard Road",
    "Ang Mo Kio Avenue 3",
    "Tampines Street 11",
    "Jurong West Street 52",
    "Bedok North Avenue 1",
    "Yishun Ring Road",
    "Woodlands Avenue 3",
    "Serangoon Road",
    "Bukit Timah Road",
    "Toa Payoh Lorong 1",
];
const FILIPINO: &[&str] = &[
    "Rizal Street",
    "Mabini Street",
    "Bonifacio Street",
    "Del Pilar Street",
    "Luna Street",
    "Burgos Street",
    "Rizal Avenue",
    "Magsaysay Avenue",
    "National Highway",
    "MacArthur Highway",
];
const INDIAN: &[&str] = &[
    "MG Road",
    "Station Road",
    "Main Road",
    "Ring Road",
    "Market Road",
    "Hospital Road",
    "College Road",
    "Temple Road",
    "Nehru Road",
    "Park Street",
    "Mall Road",
    "Link Road",
    "Airport Road",
    "Gandhi Road",
    "Church Street",
];
const VIETNAMESE: &[&str] = &[
    "Lê Lợi",
    "Trần Hưng Đạo",
    "Nguyễn Huệ",
    "Hai Bà Trưng",
    "Lý Thường Kiệt",
    "Quang Trung",
    "Lê Lai",
    "Nguyễn Trãi",
    "Trần Phú",
    "Hùng Vương",
    "Lê Duẩn",
    "Điện Biên Phủ",
    "Phan Chu Trinh",
    "Hoàng Hoa Thám",
    "Nguyễn Thị Minh Khai",
];
/// Everywhere else: names a town anywhere in the English-writing world might have, none of
/// them another country's (no Washington, no High Street).
const ELSEWHERE: &[&str] = &[
    "Main Road",
    "Station Road",
    "Market Street",
    "Airport Road",
    "Ring Road",
    "Hospital Road",
    "College Road",
    "Park Avenue",
    "Beach Road",
    "Central Avenue",
    "Stadium Road",
    "Link Road",
    "Garden Road",
    "University Avenue",
    "Harbour Road",
];

const SPANISH_AMERICA: &[&str] = &["AR", "CL", "PE", "VE", "EC", "GT", "CU", "BO", "DO", "HN", "PY", "SV", "NI", "CR", "PA", "UY"];
const FRANCOPHONE: &[&str] = &[
    "FR", "MC", "SN", "CI", "MA", "TN", "DZ", "CM", "RE", "GP", "MQ", "GF", "YT", "NC", "PF", "MF", "BL", "PM", "WF", "HT", "ML", "BF", "NE", "GA", "CG", "CD",
    "MG", "BJ", "TG", "GN",
];
const ENGLISH: &[&str] = &["GB", "IE", "AU", "NZ", "ZA", "IM", "JE", "GG", "GI"];

/// The first version of this module drew these for every store, country by country (a street
/// of 30, a number below 2,400, then block numbers in East Asia or a suffix of five in the
/// English-pattern countries); the same draws are made in the same order, so that writing
/// addresses better moves nothing else in the world.
fn first_draws(country: &str, rng: &mut ChaCha8Rng) -> (usize, i32, [i32; 3]) {
    const LOCAL_PATTERN: &[&str] = &[
        "ES", "MX", "AR", "CO", "CL", "PE", "VE", "EC", "GT", "CU", "BO", "DO", "HN", "PY", "SV", "NI", "CR", "PA", "UY", "FR", "BE", "LU", "MC", "SN", "CI",
        "MA", "TN", "DZ", "CM", "DE", "AT", "CH", "IT", "PT", "BR", "NL",
    ];
    let slot = rng.random_range(0..SLOTS);
    let n: i32 = rng.random_range(1..2400);
    let more = if matches!(country, "JP" | "KR" | "TW" | "CN") {
        [rng.random_range(1..9), rng.random_range(1..30), rng.random_range(1..20)]
    } else if LOCAL_PATTERN.contains(&country) {
        [0; 3]
    } else {
        let suffix: usize = rng.random_range(0..5);
        [suffix as i32, 0, 0]
    };
    (slot, n, more)
}

/// One pool's name for a draw's slot: the slots spread evenly over a shorter pool.
fn pick<'a>(pool: &[&'a str], slot: usize) -> &'a str {
    pool[slot * pool.len() / SLOTS]
}

/// A street address in the local pattern for a store at (`lat`, `lng`) in `region` (its town's
/// first-level region) of `country`; the region or the position chooses the language where a
/// country writes more than one (Quebec; Belgium and Switzerland by position).
pub fn address(country: &str, region: &str, lat: f64, lng: f64, rng: &mut ChaCha8Rng) -> Address {
    let (slot, n, more) = first_draws(country, rng);
    // House numbers as the country's streets run: long American and Australian roads reach the
    // thousands, a European street rarely passes a couple of hundred.
    let small = 1 + (n - 1) % 180;
    let street_number = |pool: &[&str]| Line::default().street(pick(pool, slot)).text(" ").number(small).done();
    let number_street = |pool: &[&str], sep: &str| Line::default().number(small).text(sep).street(pick(pool, slot)).done();
    let street_comma = |pool: &[&str]| Line::default().street(pick(pool, slot)).text(", ").number(small).done();
    match country {
        "CA" if region == "QC" => Line::default().number(n).text(", ").street(pick(QUEBEC, slot)).done(),
        "US" | "CA" | "PR" | "GU" | "VI" | "AS" | "MP" => {
            let street = format!("{} {}", US[slot], US_SUFFIX[more[0] as usize]);
            Line::default().number(n).text(" ").street(&street).done()
        }
        "AU" | "NZ" => Line::default().number(1 + (n - 1) % 600).text(" ").street(pick(BRITISH, slot)).done(),
        c if ENGLISH.contains(&c) => number_street(BRITISH, " "),
        "DE" | "AT" | "LI" => street_number(GERMAN),
        // Switzerland writes ss for ß; its French west and Italian south their own names
        // (by position, roughly: Romandy west of 7° E, Ticino south of the Alps' crest), the
        // number after the street in all three.
        "CH" if lng < 7.0 => street_number(FRENCH),
        "CH" if lat < 46.45 && lng > 8.4 => street_comma(ITALIAN),
        "CH" => {
            let street = pick(GERMAN, slot).replace('ß', "ss");
            Line::default().street(&street).text(" ").number(small).done()
        }
        // Flanders north of about 50.75° N writes Dutch, Wallonia French; Belgium puts the
        // number after the street in both.
        "BE" if lat > 50.75 => street_number(DUTCH),
        "BE" => street_number(FRENCH),
        "LU" => number_street(FRENCH, ", "),
        c if FRANCOPHONE.contains(&c) => number_street(FRENCH, " "),
        "NL" => street_number(DUTCH),
        "IT" | "SM" | "VA" => street_comma(ITALIAN),
        "ES" | "AD" => street_comma(SPANISH),
        "MX" => street_number(MEXICAN),
        // Colombia numbers its streets: Calle 72 # 10-07 is on Calle 72, 7 m past Carrera 10.
        "CO" => {
            let kind = if n % 2 == 0 { "Calle" } else { "Carrera" };
            let street = format!("{kind} {}", 1 + (slot as i32 * 7 + n / 13) % 120);
            let number = format!("{}-{:02}", 1 + n % 99, (n / 99) % 100);
            Line::default().street(&street).text(" # ").number(number).done()
        }
        c if SPANISH_AMERICA.contains(&c) => street_number(LATIN),
        "PT" | "AO" | "MZ" | "CV" => street_comma(PORTUGUESE),
        "BR" => Line::default().street(pick(BRAZILIAN, slot)).text(", ").number(n).done(),
        "PL" => {
            let name = pick(POLISH, slot);
            match name.strip_prefix("ul. ") {
                Some(street) => Line::default().text("ul. ").street(street).text(" ").number(small).done(),
                None => street_number(POLISH),
            }
        }
        "CZ" => street_number(CZECH),
        "SK" => street_number(SLOVAK),
        "HU" => street_number(HUNGARIAN),
        "RO" | "MD" => Line::default().street(pick(ROMANIAN, slot)).text(" nr. ").number(small).done(),
        "SE" => street_number(SWEDISH),
        "NO" => street_number(NORWEGIAN),
        "DK" | "FO" | "GL" => street_number(DANISH),
        "FI" => street_number(FINNISH),
        "RU" | "BY" | "KZ" | "KG" => street_comma(RUSSIAN),
        "UA" => street_comma(UKRAINIAN),
        "GR" | "CY" => street_number(GREEK),
        "TR" => Line::default().street(pick(TURKISH, slot)).text(" No: ").number(small).done(),
        // Chōme, block and house: 1-4-7 Chūō.
        "JP" => Line::default().number(format!("{}-{}-{}", more[0], more[1], more[2])).text(" ").street(pick(JAPANESE, slot)).done(),
        "KR" => Line::default().street(pick(KOREAN, slot)).text(" ").number(1 + (n - 1) % 400).done(),
        "CN" | "MO" => Line::default().text("No. ").number(1 + (n - 1) % 500).text(" ").street(pick(CHINESE, slot)).done(),
        "TW" => Line::default().text("No. ").number(1 + (n - 1) % 400).text(", ").street(pick(TAIWANESE, slot)).done(),
        "HK" => Line::default().number(1 + (n - 1) % 400).text(" ").street(pick(HONG_KONG, slot)).done(),
        // A Thai house number often carries its plot after a slash: 99/3.
        "TH" => {
            let number = if more[0] < 2 { format!("{}/{}", 1 + (n - 1) % 400, 1 + n % 40) } else { (1 + (n - 1) % 400).to_string() };
            Line::default().number(number).text(" ").street(pick(THAI, slot)).done()
        }
        "ID" => Line::default().street(pick(INDONESIAN, slot)).text(" No. ").number(small).done(),
        "MY" | "BN" => number_street(MALAY, ", "),
        "SG" => Line::default().number(1 + (n - 1) % 700).text(" ").street(pick(SINGAPOREAN, slot)).done(),
        "PH" => number_street(FILIPINO, " "),
        "IN" => number_street(INDIAN, ", "),
        "VN" => number_street(VIETNAMESE, " "),
        _ => number_street(ELSEWHERE, " "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The draws are the first version's, country by country: what follows an address in the
    /// stream (the postcode, the phone) is drawn from where it was.
    #[test]
    fn an_address_takes_as_many_draws_as_the_first_version_did() {
        // The first version's consumption, written out: a street of 30 and a number, then three
        // block numbers (East Asia), nothing (the countries it had a local pattern for), or a
        // suffix of five.
        fn first_version(country: &str, rng: &mut ChaCha8Rng) {
            let _: usize = rng.random_range(0..30);
            let _: i32 = rng.random_range(1..2400);
            if ["JP", "KR", "TW", "CN"].contains(&country) {
                let _: i32 = rng.random_range(1..9);
                let _: i32 = rng.random_range(1..30);
                let _: i32 = rng.random_range(1..20);
            } else if [
                "ES", "MX", "AR", "CO", "CL", "PE", "VE", "EC", "GT", "CU", "BO", "DO", "HN", "PY", "SV", "NI", "CR", "PA", "UY", "FR", "BE", "LU", "MC", "SN",
                "CI", "MA", "TN", "DZ", "CM", "DE", "AT", "CH", "IT", "PT", "BR", "NL",
            ]
            .contains(&country)
            {
            } else {
                let _: usize = rng.random_range(0..5);
            }
        }
        for country in ["US", "GB", "DE", "CH", "BE", "FR", "JP", "KR", "CN", "TW", "PL", "RU", "CO", "TH", "ID", "IN", "BR", "MX", "UY", "ZW", "NL"] {
            for seed in 0..200 {
                let (mut a, mut b) = (ChaCha8Rng::seed_from_u64(seed), ChaCha8Rng::seed_from_u64(seed));
                address(country, "", 47.0, 8.0, &mut a);
                first_version(country, &mut b);
                assert_eq!(a.random::<u64>(), b.random::<u64>(), "{country}, seed {seed}");
            }
        }
    }

    /// The parts are where the line says: apart, and with nothing but joining words (no digit)
    /// left of the line around them, so the street never carries the house number
    /// (OpenStreetMap's `addr:street` is a name) nor the number a piece of the street.
    #[test]
    fn the_street_and_the_number_are_the_lines_parts() {
        let countries = [
            "US", "GB", "AU", "DE", "CH", "BE", "FR", "LU", "NL", "IT", "ES", "MX", "CO", "AR", "PT", "BR", "PL", "CZ", "RO", "SE", "RU", "UA", "TR", "JP",
            "KR", "CN", "TW", "HK", "TH", "ID", "MY", "SG", "IN", "VN", "ZW",
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for country in countries {
            for _ in 0..300 {
                let (lat, lng) = (rng.random_range(45.0..52.0), rng.random_range(5.0..10.0));
                let a = address(country, if country == "CA" { "QC" } else { "" }, lat, lng, &mut rng);
                let (s, n) = ((usize::from(a.street.0), usize::from(a.street.1)), (usize::from(a.number.0), usize::from(a.number.1)));
                assert!(s.0 < s.1 && n.0 < n.1 && (s.1 <= n.0 || n.1 <= s.0), "{country}: {a:?}");
                assert!(a.number().starts_with(|c: char| c.is_ascii_digit()), "{country}: {a:?}");
                assert_eq!(a.street().trim(), a.street(), "{country}: {a:?}");
                let (first, second) = if s.0 < n.0 { (s, n) } else { (n, s) };
                let rest = format!("{}{}{}", &a.line[..first.0], &a.line[first.1..second.0], &a.line[second.1..]);
                assert!(rest.len() <= 6 && !rest.contains(|c: char| c.is_ascii_digit()), "{country}: {:?} leaves {rest:?}", a.line);
            }
        }
    }
}
