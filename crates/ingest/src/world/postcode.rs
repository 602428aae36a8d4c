//! Postcodes: the nearest real ZIP in the US; in Germany, France, Spain, Italy and the
//! Netherlands a code whose first two digits are the postal area the store stands in (a store
//! in Munich is 80xxx, one in Marseille 13xxx, one in Madrid 28xxx), found as the area of the
//! nearest of its main towns; elsewhere the country's pattern with digits drawn at random.
//!
//! The areas' first digits are the postal services' own division: Germany's two-digit
//! Leitregionen, France's and Spain's département and province numbers, Italy's provinces'
//! CAP prefixes, the Netherlands' two-digit regions. Each is placed at its main town, read by
//! name from the gazetteer (the most populous place of that name in the country).

use std::collections::HashMap;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

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
    ("80", "Munich"),
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
    ("75", "Paris"),
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
    ("11", "Cadiz"),
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
    ("00", "Rome"),
    ("01", "Viterbo"),
    ("02", "Rieti"),
    ("03", "Frosinone"),
    ("04", "Latina"),
    ("05", "Terni"),
    ("06", "Perugia"),
    ("07", "Sassari"),
    ("08", "Nuoro"),
    ("09", "Cagliari"),
    ("10", "Turin"),
    ("11", "Aosta"),
    ("12", "Cuneo"),
    ("13", "Vercelli"),
    ("14", "Asti"),
    ("15", "Alessandria"),
    ("16", "Genoa"),
    ("17", "Savona"),
    ("18", "Imperia"),
    ("19", "La Spezia"),
    ("20", "Milan"),
    ("21", "Varese"),
    ("22", "Como"),
    ("23", "Sondrio"),
    ("24", "Bergamo"),
    ("25", "Brescia"),
    ("26", "Cremona"),
    ("27", "Pavia"),
    ("28", "Novara"),
    ("29", "Piacenza"),
    ("30", "Venice"),
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
    ("50", "Florence"),
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
    ("80", "Naples"),
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
    ("25", "The Hague"),
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

/// Areas that end closer to their town than their neighbours' towns would say, in km. The
/// gazetteer has the city of Paris as one place, and the towns around it, some 4 km from its
/// centre (Montrouge, Le Kremlin-Bicêtre), are suburbs in départements of their own: 75 is
/// Paris's place alone.
const REACH_KM: [(&str, &str, f64); 1] = [("FR", "75", 1.0)];

/// The countries with postal areas, and their tables.
const AREAS: [(&str, &[(&str, &str)]); 5] = [("DE", DE), ("FR", FR), ("ES", ES), ("IT", IT), ("NL", NL)];

/// Each country's postal areas at their main towns.
#[derive(Default)]
pub struct PostalAreas {
    by_country: HashMap<&'static str, Vec<(f64, f64, &'static str)>>,
}

impl PostalAreas {
    /// The areas whose town the gazetteer has: the most populous place of that name in that
    /// country (Essen in the Ruhr, not the village in Lower Saxony).
    pub fn new(cities: &[City]) -> PostalAreas {
        let wanted: HashMap<(&str, &str), &str> =
            AREAS.iter().flat_map(|&(country, table)| table.iter().map(move |&(prefix, town)| ((country, town), prefix))).collect();
        let mut best: HashMap<(&str, &str), &City> = HashMap::new();
        for c in cities {
            if let Some((&key, _)) = wanted.get_key_value(&(c.country.as_str(), c.name.as_str())) {
                let slot = best.entry(key).or_insert(c);
                if c.population > slot.population {
                    *slot = c;
                }
            }
        }
        let mut by_country: HashMap<&'static str, Vec<(f64, f64, &'static str)>> = HashMap::new();
        for &(country, table) in &AREAS {
            for &(prefix, town) in table {
                if let Some(c) = best.get(&(country, town)) {
                    by_country.entry(country).or_default().push((c.lat, c.lng, prefix));
                }
            }
        }
        PostalAreas { by_country }
    }

    /// The towns of the tables the gazetteer does not have (a test holds this empty).
    pub fn missing(cities: &[City]) -> Vec<String> {
        let found = PostalAreas::new(cities);
        AREAS
            .iter()
            .flat_map(|&(country, table)| table.iter().map(move |&(prefix, town)| (country, prefix, town)))
            .filter(|&(country, prefix, _)| !found.by_country.get(country).is_some_and(|v| v.iter().any(|a| a.2 == prefix)))
            .map(|(country, prefix, town)| format!("{country} {prefix} {town}"))
            .collect()
    }

    /// The first two digits of the area nearest (`lat`, `lng`), in a country that has areas.
    pub fn prefix(&self, country: &str, lat: f64, lng: f64) -> Option<&'static str> {
        // Near enough to flat across one country: longitude's degrees shrink with latitude.
        let k = lat.to_radians().cos();
        let km = |a: &(f64, f64, &str)| 111.2 * ((a.0 - lat).powi(2) + ((a.1 - lng) * k).powi(2)).sqrt();
        let within = |a: &&(f64, f64, &str)| !REACH_KM.iter().any(|&(c, p, reach)| c == country && p == a.2 && km(a) > reach);
        self.by_country.get(country)?.iter().filter(within).min_by(|a, b| km(a).total_cmp(&km(b))).map(|a| a.2)
    }
}

fn digits(n: u32, rng: &mut ChaCha8Rng) -> String {
    (0..n).map(|_| char::from(b'0' + rng.random_range(0..10u8))).collect()
}

fn letter(rng: &mut ChaCha8Rng) -> char {
    char::from(b'A' + rng.random_range(0..26u8))
}

/// `drawn` with its first two digits those of the area, where the country has areas.
fn in_area(drawn: String, area: Option<&str>) -> String {
    match area {
        Some(a) => format!("{a}{}", &drawn[2..]),
        None => drawn,
    }
}

/// A postcode for a store at (`lat`, `lng`) in `country`: `us_zip` is the nearest real ZIP
/// (the US), `area` the postal area's first two digits ([`PostalAreas::prefix`]). The random
/// draws are the same whatever the area, so the rest of the world does not move with it.
pub fn postcode(country: &str, us_zip: Option<&str>, area: Option<&str>, rng: &mut ChaCha8Rng) -> String {
    match country {
        "US" => us_zip.unwrap_or_default().to_string(),
        // A French code ends in 0 (a commune's, or its post office's) but in Paris, where it
        // names the arrondissement (75001-75020).
        "FR" => {
            let drawn = digits(5, rng);
            match area {
                Some("75") => format!("750{:02}", 1 + drawn[2..4].parse::<u32>().unwrap_or(0) % 20),
                Some(a) => format!("{a}{}0", &drawn[2..4]),
                None => drawn,
            }
        }
        "DE" | "ES" | "IT" => in_area(digits(5, rng), area),
        "MX" | "FI" | "MY" | "TH" | "TR" | "KR" | "SA" | "UA" | "HR" | "EE" | "LT" | "ID" => digits(5, rng),
        "AU" | "AT" | "BE" | "CH" | "DK" | "NO" | "NZ" | "ZA" | "HU" | "PH" | "BG" | "LU" | "SI" => digits(4, rng),
        "NL" => {
            let d = in_area(digits(4, rng), area);
            format!("{d} {}{}", letter(rng), letter(rng))
        }
        "CA" => format!("{}{}{} {}{}{}", letter(rng), digits(1, rng), letter(rng), digits(1, rng), letter(rng), digits(1, rng)),
        "GB" => format!("{}{}{} {}{}{}", letter(rng), letter(rng), digits(1, rng), digits(1, rng), letter(rng), letter(rng)),
        "JP" => format!("{}-{}", digits(3, rng), digits(4, rng)),
        "BR" => format!("{}-{}", digits(5, rng), digits(3, rng)),
        "PL" => format!("{}-{}", digits(2, rng), digits(3, rng)),
        "SE" | "CZ" | "SK" | "GR" => format!("{} {}", digits(3, rng), digits(2, rng)),
        "IN" | "RU" | "CN" | "SG" | "KZ" | "BY" | "RO" | "VN" => digits(6, rng),
        _ => String::new(),
    }
}
