//! Where a chain really trades: its published store counts per country (`data/footprints.csv`,
//! where a row may also count several countries together, `GB+IE`), the markets it has none in
//! (rows with a count of 0), the countries AllThePlaces scraped its
//! store locator in (`data/atp-presence.csv`), and its home city (`data/home-cities.csv`). The
//! catalog attaches these to brands; the world generator places stores by them.

use std::collections::{BTreeSet, HashMap};

use serde::Deserialize;

use crate::reference::{AtpPresence, BrandHomeRow, FootprintRow, OsmCoverageRow, WorldTotalRow, GROUP_SEPARATOR};

/// An NSI location set this wide means "anywhere in the world": it says nothing about where a
/// chain is, so it cannot confine one.
pub const WORLDWIDE_SET: usize = 150;

/// The countries a footprint row counts: one, or several together.
pub fn row_countries(country: &str) -> impl Iterator<Item = &str> {
    country.split(GROUP_SEPARATOR)
}

/// One row of `data/home-cities.csv`: the city a chain started in or is run from, where it is
/// densest (Starbucks in Seattle, Tim Hortons in Ontario).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct HomeCity {
    pub brand_wikidata: String,
    pub country: String,
    /// The GeoNames admin-1 code that tells namesakes apart (Lebanon, TN from Lebanon, PA).
    pub admin1: String,
    /// A GeoNames city name.
    pub city: String,
    pub reach: Reach,
}

/// How far beyond home a chain has spread in its home country.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Reach {
    /// Trades across the country, a little denser at home (Starbucks, Tim Hortons).
    National,
    /// A few states or provinces around home (Publix, Wawa, a regional bank).
    Regional,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Footprint {
    /// Published store counts per country, largest first. A count for several countries
    /// together is here too where, less its members' own rows, one member is left (Next's
    /// Britain and Ireland less Ireland's own row is Britain's).
    pub counts: Vec<(String, u32)>,
    /// Published counts for several countries together, less their members' own rows, over the
    /// members left (Foot Locker's 626 in its 19 European markets): the generator spreads each
    /// over its members as it spreads a chain's rest.
    pub groups: Vec<(Vec<String>, u32)>,
    /// Countries the chain has no stores in.
    pub absent: Vec<String>,
    /// Countries AllThePlaces has a country-specific spider for the chain in.
    pub scraped: Vec<String>,
    /// `scraped` is all AllThePlaces knows (no multi-country spider).
    pub scraped_complete: bool,
    /// AllThePlaces has a spider for the chain, country-specific or not.
    pub spidered: bool,
    pub home: Option<HomeCity>,
    /// The share of the chain OpenStreetMap maps, by country (`""`: worldwide), where
    /// `data/osm-coverage.csv` measures it.
    pub osm_share: Vec<(String, f64)>,
    /// The country its company is run from, where `data/world-totals.csv` names it.
    pub company_home: Option<String>,
    /// The chain's world total, where `data/world-totals.csv` gives one for its id.
    pub world_total: Option<u32>,
    /// The country a brand whose location sets name several countries trades most in, where
    /// `data/brand-homes.csv` names it.
    pub brand_home: Option<String>,
}

/// A count this small says little about how much of a chain OpenStreetMap sees (Burger King
/// Vietnam: 4 official, 14 mapped).
const MIN_OFFICIAL_FOR_SHARE: u32 = 50;
/// OpenStreetMap counts above the official one (Walmart, Tesco, IKEA: other formats and
/// departments tagged with the brand) mean it maps nearly all of the chain, not more.
pub const OSM_SHARE_MAX: f64 = 0.95;

/// How much of a chain OpenStreetMap maps, from its official and mapped counts.
pub fn osm_share(official: u32, mapped: u32) -> Option<f64> {
    (official >= MIN_OFFICIAL_FOR_SHARE).then(|| (f64::from(mapped) / f64::from(official)).min(OSM_SHARE_MAX))
}

impl Footprint {
    /// What the table publishes in all: its countries' counts and its groups' rests.
    pub fn published_total(&self) -> u64 {
        self.counts.iter().map(|(_, n)| *n as u64).chain(self.groups.iter().map(|(_, n)| *n as u64)).sum()
    }

    /// The chain's home market as the tables name it: its home city's country, else its
    /// company's (`world-totals.csv`), else `brand-homes.csv`'s. (The catalog falls back on its
    /// ticker's exchange after these.)
    pub fn named_home(&self) -> Option<&str> {
        self.home.as_ref().map(|h| h.country.as_str()).or(self.company_home.as_deref()).or(self.brand_home.as_deref())
    }

    /// Whether the table has a count for the chain somewhere, for one country or several.
    pub fn has_counts(&self) -> bool {
        !self.counts.is_empty() || !self.groups.is_empty()
    }

    /// Whether a published count covers `country`, alone or with others.
    pub fn counted(&self, country: &str) -> bool {
        self.counts.iter().any(|(c, _)| c == country) || self.groups.iter().any(|(m, _)| m.iter().any(|c| c == country))
    }

    /// Whether `scraped` is every country AllThePlaces harvests the chain in: it has spiders,
    /// and each is one country's.
    pub fn scraped_is_all(&self) -> bool {
        self.scraped_complete && !self.scraped.is_empty()
    }

    /// The countries a brand's stores beyond its published counts may go to, less the counted
    /// and absent ones. `nsi` is the union of the brand's NSI location sets; `narrow` the union
    /// of those of them narrower than [`WORLDWIDE_SET`] (NSI's regional entries).
    ///
    /// - With published counts (the main markets), the rest goes only where something names the
    ///   chain: a country-specific spider or a regional NSI entry.
    /// - Without, a brand whose spiders are all country-specific is confined to them and to a
    ///   narrow NSI set; otherwise its NSI set stands, worldwide or not.
    /// - A regional chain (see [`Reach::Regional`]) trades only in its home country: NSI's US
    ///   set also names Puerto Rico and Guam, where Publix has no store.
    /// - A chain trades at `home` (the country its company is run from) where its location set
    ///   names it, whatever else names it: AllThePlaces' only Levi's spider is Taiwan's, and
    ///   Adidas' table rows miss Germany.
    pub fn trade_countries(&self, nsi: &[String], narrow: &[String], home: Option<&str>) -> Vec<String> {
        let scraped = self.scraped.iter().map(String::as_str);
        let home = home.filter(|h| nsi.iter().any(|c| c == h));
        let named: BTreeSet<&str> = if self.has_counts() {
            scraped.chain(narrow.iter().map(String::as_str)).chain(home).collect()
        } else if self.scraped_is_all() {
            let nsi_names = nsi.len() < WORLDWIDE_SET;
            scraped.chain(nsi.iter().map(String::as_str).filter(|_| nsi_names)).chain(home).collect()
        } else {
            nsi.iter().map(String::as_str).collect()
        };
        let home_only = self.home.as_ref().filter(|h| h.reach == Reach::Regional).map(|h| h.country.as_str());
        named
            .into_iter()
            .filter(|c| home_only.is_none_or(|h| h == *c))
            .filter(|c| !self.absent.iter().any(|a| a == c) && !self.counted(c))
            .map(str::to_string)
            .collect()
    }
}

/// The footprints of every brand with one, by wikidata id.
#[derive(Debug, Default)]
pub struct Footprints {
    by_wikidata: HashMap<String, Footprint>,
}

impl Footprints {
    /// Rows without a wikidata id document a figure but place nothing. Where the table has two
    /// rows for one brand and country (or the same group, in any order), the later one in the
    /// file wins (newer figures are added below older ones). A group's count less its members'
    /// own rows, whatever their dates, goes to the members without one (none absent): to that
    /// member alone where one is left, else spread; a group whose members' rows already hold it
    /// adds nothing, and a group count of 0 is an exit from each member without a row. Groups
    /// of one brand must not share a member (the table test holds that).
    pub fn new(rows: &[FootprintRow], presence: &[AtpPresence], homes: &[HomeCity]) -> Footprints {
        let mut by_wikidata: HashMap<String, Footprint> = HashMap::new();
        // A group's key is its members in order: `IE+GB` is `GB+IE`.
        let place = |country: &str| {
            let mut members: Vec<&str> = row_countries(country).collect();
            members.sort_unstable();
            members.join(&GROUP_SEPARATOR.to_string())
        };
        let places: Vec<String> = rows.iter().map(|r| place(&r.country)).collect();
        let mut latest: HashMap<(&str, &str), u32> = HashMap::new();
        let mut order: Vec<(&str, &str)> = Vec::new();
        for (r, p) in rows.iter().zip(&places).filter(|(r, _)| !r.brand_wikidata.is_empty()) {
            let key = (r.brand_wikidata.as_str(), p.as_str());
            if latest.insert(key, r.count).is_none() {
                order.push(key);
            }
        }
        let single = |(_, country): &(&str, &str)| !country.contains(GROUP_SEPARATOR);
        for key @ (q, country) in order.iter().filter(|k| single(k)) {
            let count = latest[key];
            let f = by_wikidata.entry(q.to_string()).or_default();
            if count == 0 {
                f.absent.push(country.to_string());
            } else {
                f.counts.push((country.to_string(), count));
            }
        }
        for key @ (q, group) in order.iter().filter(|k| !single(k)) {
            let f = by_wikidata.entry(q.to_string()).or_default();
            let members: Vec<&str> = row_countries(group).collect();
            let own: u32 = f.counts.iter().filter(|(c, _)| members.contains(&c.as_str())).map(|(_, n)| *n).sum();
            let left: Vec<String> = members.iter().filter(|c| !f.counted(c) && !f.absent.iter().any(|a| a == *c)).map(|c| c.to_string()).collect();
            let rest = latest[key].saturating_sub(own);
            match (latest[key], rest, left.len()) {
                // A count of 0 for several countries: the chain has left them all.
                (0, _, _) => f.absent.extend(left),
                (_, 0, _) | (_, _, 0) => {}
                (_, _, 1) => f.counts.push((left[0].clone(), rest)),
                _ => f.groups.push((left, rest)),
            }
        }
        for p in presence {
            let f = by_wikidata.entry(p.brand_wikidata.clone()).or_default();
            f.scraped = p.countries.split_whitespace().map(str::to_string).collect();
            f.scraped_complete = p.complete;
            f.spidered = true;
        }
        for h in homes {
            by_wikidata.entry(h.brand_wikidata.clone()).or_default().home = Some(h.clone());
        }
        for f in by_wikidata.values_mut() {
            f.counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            f.absent.sort();
        }
        Footprints { by_wikidata }
    }

    /// Adds the OpenStreetMap shares `data/osm-coverage.csv` measures.
    pub fn with_osm_coverage(mut self, rows: &[OsmCoverageRow]) -> Footprints {
        for r in rows {
            let Some(share) = osm_share(r.official_count, r.osm_count) else { continue };
            let country = match r.country.as_str() {
                "Worldwide" => "",
                c if c.len() == 2 && c.bytes().all(|b| b.is_ascii_uppercase()) => c,
                // Not a country the table means: no share, rather than a worldwide one.
                _ => continue,
            };
            for q in r.brand_wikidata.split(';').map(str::trim).filter(|q| !q.is_empty()) {
                self.by_wikidata.entry(q.to_string()).or_default().osm_share.push((country.to_string(), share));
            }
        }
        self
    }

    /// Adds the world totals and company homes `data/world-totals.csv` gives (a group total
    /// across banners has no id, and gives neither).
    pub fn with_world_totals(mut self, rows: &[WorldTotalRow]) -> Footprints {
        for r in rows.iter().filter(|r| !r.brand_wikidata.is_empty()) {
            let fp = self.by_wikidata.entry(r.brand_wikidata.clone()).or_default();
            fp.world_total = Some(r.world_total);
            if !r.home.is_empty() {
                fp.company_home = Some(r.home.clone());
            }
        }
        self
    }

    /// Adds the home markets `data/brand-homes.csv` names.
    pub fn with_brand_homes(mut self, rows: &[BrandHomeRow]) -> Footprints {
        for r in rows.iter().filter(|r| !r.country.is_empty()) {
            self.by_wikidata.entry(r.brand_wikidata.clone()).or_default().brand_home = Some(r.country.clone());
        }
        self
    }

    pub fn get(&self, wikidata: &str) -> Option<&Footprint> {
        self.by_wikidata.get(wikidata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(q: &str, country: &str, count: u32) -> FootprintRow {
        FootprintRow { brand: "x".into(), brand_wikidata: q.into(), country: country.into(), count }
    }

    fn codes(list: &[&str]) -> Vec<String> {
        list.iter().map(|c| c.to_string()).collect()
    }

    fn coverage(q: &str, country: &str, official: u32, osm: u32) -> OsmCoverageRow {
        OsmCoverageRow { name: "x".into(), brand_wikidata: q.into(), country: country.into(), official_count: official, osm_count: osm }
    }

    #[test]
    fn osm_shares_by_country_and_worldwide() {
        let rows = [
            coverage("Q7", "Worldwide", 1000, 520),
            coverage("Q7", "JP", 21651, 14744),
            // Two ids for one chain; more mapped than official; too few to say anything.
            coverage("Q1;Q2", "US", 100, 180),
            coverage("Q3", "VN", 4, 14),
            // Not a country the table means.
            coverage("Q4", "USA", 1000, 500),
        ];
        let f = Footprints::new(&[], &[], &[]).with_osm_coverage(&rows);
        let share = |q: &str, c: &str| f.get(q).and_then(|fp| fp.osm_share.iter().find(|(k, _)| k == c).map(|(_, s)| *s));
        assert_eq!(share("Q7", ""), Some(0.52));
        assert!((share("Q7", "JP").unwrap() - 14744.0 / 21651.0).abs() < 1e-12);
        assert_eq!((share("Q1", "US"), share("Q2", "US")), (Some(OSM_SHARE_MAX), Some(OSM_SHARE_MAX)));
        assert!(f.get("Q3").is_none() && f.get("Q4").is_none());
    }

    #[test]
    fn counts_absences_and_later_rows_win() {
        let rows = [row("Q1", "US", 10), row("Q1", "RU", 40), row("Q1", "RU", 0), row("Q1", "CA", 5), row("", "GB", 99)];
        let f = Footprints::new(&rows, &[], &[]);
        let q1 = f.get("Q1").unwrap();
        assert_eq!(q1.counts, vec![("US".to_string(), 10), ("CA".to_string(), 5)]);
        assert_eq!(q1.absent, codes(&["RU"]));
        assert_eq!(q1.published_total(), 15);
        assert!(f.get("").is_none(), "a row without an id places nothing");
    }

    #[test]
    fn a_count_for_several_countries_goes_to_the_members_without_their_own() {
        let rows = [
            row("Q1", "GB+IE", 458),
            row("Q1", "IE", 23),
            row("Q2", "DE+FR+LU", 600),
            row("Q2", "LU", 0),
            row("Q3", "US+CA", 100),
            row("Q3", "US", 120),
            row("Q4", "AT+CH+DE", 50),
            row("Q4", "DE+CH+AT", 90),
            row("Q5", "NO+SE", 0),
            row("Q5", "SE", 4),
        ];
        let f = Footprints::new(&rows, &[], &[]);
        let q1 = f.get("Q1").unwrap();
        assert_eq!(q1.counts, vec![("GB".to_string(), 435), ("IE".to_string(), 23)], "one member left: the rest is its own count");
        assert!(q1.groups.is_empty());
        assert_eq!(q1.published_total(), 458);
        let q2 = f.get("Q2").unwrap();
        assert_eq!(q2.groups, vec![(codes(&["DE", "FR"]), 600)], "an absent member takes none");
        assert!(q2.counted("DE") && q2.counted("FR") && !q2.counted("LU") && q2.absent == codes(&["LU"]));
        let world = codes(&["BE", "DE", "FR", "LU"]);
        assert_eq!(q2.trade_countries(&world, &world, None), codes(&["BE"]), "a group counts its members: the rest goes elsewhere");
        let q3 = f.get("Q3").unwrap();
        assert_eq!((q3.counts.clone(), q3.groups.len()), (vec![("US".to_string(), 120)], 0), "members' own rows already hold the group");
        assert_eq!(f.get("Q4").unwrap().groups, vec![(codes(&["AT", "CH", "DE"]), 90)], "the later row wins, its members in any order");
        let q5 = f.get("Q5").unwrap();
        assert_eq!((q5.absent.clone(), q5.counts.clone()), (codes(&["NO"]), vec![("SE".to_string(), 4)]), "a group count of 0 is an exit from the others");
    }

    #[test]
    fn a_place_that_is_not_iso_codes_is_refused_with_its_row() {
        let read = |place: &str| {
            let text = format!("brand,brand_wikidata,country,count\nx,Q1,{place},5\n");
            csv::Reader::from_reader(text.as_bytes()).deserialize::<FootprintRow>().next().unwrap().map(|r| r.country)
        };
        assert_eq!(read("GB+IE").unwrap(), "GB+IE");
        assert_eq!(read("US").unwrap(), "US");
        for bad in ["gb", "GB+", "GBR", "GB+GB", "\"GB, IE\""] {
            let e = read(bad).expect_err(bad).to_string();
            assert!(e.contains("ISO 3166-1"), "{bad}: {e}");
        }
    }

    #[test]
    fn trade_countries_confine_by_spiders_or_a_narrow_location_set() {
        let world: Vec<String> = (0..200).map(|i| format!("C{i}")).collect();
        let spiders = |complete| Footprint { scraped: codes(&["ES", "FR"]), scraped_complete: complete, ..Default::default() };
        assert_eq!(spiders(true).trade_countries(&world, &[], None), codes(&["ES", "FR"]), "complete spiders confine a worldwide brand");
        assert_eq!(
            spiders(true).trade_countries(&codes(&["BE", "FR"]), &codes(&["BE", "FR"]), None),
            codes(&["BE", "ES", "FR"]),
            "spiders or the location set"
        );
        assert_eq!(spiders(false).trade_countries(&world, &[], None).len(), 200, "a multi-country spider may be anywhere");
        assert_eq!(Footprint::default().trade_countries(&world, &codes(&["JP"]), None).len(), 200, "nothing known: the location set stands");

        let counted = Footprint { counts: vec![("JP".into(), 100)], absent: codes(&["DE"]), ..Default::default() };
        assert!(counted.trade_countries(&world, &[], None).is_empty(), "published counts and nothing else named: nowhere else");
        assert_eq!(counted.trade_countries(&world, &codes(&["DE", "JP", "TH"]), None), codes(&["TH"]), "regional entries, not the counted nor the absent");
        let counted_and_scraped = Footprint { scraped: codes(&["GB"]), scraped_complete: false, ..counted };
        assert_eq!(counted_and_scraped.trade_countries(&world, &codes(&["TH"]), None), codes(&["GB", "TH"]), "any country-specific spider names a market");

        let home = |reach| HomeCity { brand_wikidata: "Q1".into(), country: "US".into(), admin1: "FL".into(), city: "Lakeland".into(), reach };
        let us_set = codes(&["GU", "PR", "US", "VI"]);
        let regional = Footprint { home: Some(home(Reach::Regional)), ..Default::default() };
        assert_eq!(regional.trade_countries(&us_set, &us_set, None), codes(&["US"]), "a regional chain stays in its home country");
        let national = Footprint { home: Some(home(Reach::National)), ..Default::default() };
        assert_eq!(national.trade_countries(&us_set, &us_set, None), us_set, "a national chain trades where its location set says");

        // A home the location set names is a market, whatever confines the rest; one it does
        // not name is not.
        assert_eq!(spiders(true).trade_countries(&world, &[], Some("C7")), codes(&["C7", "ES", "FR"]), "Levi's: a Taiwanese spider, an American home");
        assert_eq!(spiders(true).trade_countries(&world, &[], Some("XX")), codes(&["ES", "FR"]), "a home outside the location set");
        let counted = Footprint { counts: vec![("JP".into(), 100)], absent: codes(&["DE"]), ..Default::default() };
        assert_eq!(counted.trade_countries(&world, &[], Some("C3")), codes(&["C3"]), "Adidas: counted abroad, not at home");
        assert!(counted.trade_countries(&world, &[], Some("JP")).is_empty(), "a counted home is not a market without a figure");
    }
}
