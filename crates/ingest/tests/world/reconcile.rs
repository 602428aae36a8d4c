//! The fixture scene through the reconciler (multi-source), compared with expected.json `rows`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde_json::Value;
use storemap_core::RowBuilder;
use storemap_ingest::import::{import_atp, import_fsq, import_osm, import_overture};
use storemap_ingest::reconcile::ReconcileStats;
use storemap_ingest::SourceRow;

use crate::common::{alias_keys, distance_to_country_edge_m, expected, expected_rows, fixtures_dir, members, reconcile, reference, row_key};

struct Scene {
    rows: Vec<SourceRow>,
    out: Vec<RowBuilder>,
    stats: ReconcileStats,
}

/// The four good fixtures imported and reconciled once.
fn scene() -> &'static Scene {
    static SCENE: OnceLock<Scene> = OnceLock::new();
    SCENE.get_or_init(|| {
        let d = fixtures_dir();
        let mut rows = Vec::new();
        rows.extend(import_osm(&d.join("osm")).expect("osm fixture").0);
        rows.extend(import_atp(&d.join("atp")).expect("atp fixture").0);
        rows.extend(import_overture(&d.join("overture")).expect("overture fixture").0);
        rows.extend(import_fsq(&d.join("fsq")).expect("fsq fixture").0);
        let (out, stats) = reconcile(&rows, true);
        Scene { rows, out, stats }
    })
}

fn describe(r: &RowBuilder) -> String {
    let b = &reference().catalog.brands[r.brand as usize];
    format!("[{} {:?} {} conf {:.3} {:?}]", b.name, b.wikidata, r.country, r.confidence, alias_keys(r))
}

fn describe_all(out: &[RowBuilder]) -> String {
    out.iter().map(describe).collect::<Vec<_>>().join("\n    ")
}

fn open_branded() -> Vec<&'static Value> {
    expected_rows().iter().filter(|r| r["branded"] == true && r["status"] == "open").collect()
}

/// The reconciled rows holding any of `members`.
fn rows_touching<'a>(out: &'a [RowBuilder], members: &BTreeSet<String>) -> Vec<&'a RowBuilder> {
    out.iter().filter(|r| !alias_keys(r).is_disjoint(members)).collect()
}

fn border_members() -> BTreeSet<String> {
    expected()["border"]["expected_country"].as_object().expect("border.expected_country").keys().cloned().collect()
}

#[test]
fn every_open_branded_store_is_exactly_one_row() {
    let sc = scene();
    let border = border_members();
    let mut problems = Vec::new();
    for e in open_branded() {
        let key = e["key"].as_str().unwrap();
        let want: BTreeSet<String> = members(e).into_iter().collect();
        let hits = rows_touching(&sc.out, &want);
        match hits.as_slice() {
            [] => problems.push(format!("{key}: no reconciled row holds any of {want:?}")),
            [r] => {
                let got = alias_keys(r);
                if got != want {
                    problems.push(format!("{key}: aliases {got:?}, expected members {want:?}"));
                }
                let brand = &reference().catalog.brands[r.brand as usize];
                if brand.wikidata.as_deref() != e["brand_wikidata"].as_str() {
                    problems.push(format!("{key}: brand {} ({:?}), expected {}", brand.name, brand.wikidata, e["brand_wikidata"]));
                }
                // Border rows have a test of their own.
                if want.is_disjoint(&border) && e["country"].as_str() != Some(r.country.as_str()) {
                    problems.push(format!("{key}: country {}, expected {}", r.country, e["country"]));
                }
                if r.sources.len() as usize != want.iter().map(|m| m.split(':').next().unwrap()).collect::<BTreeSet<_>>().len() {
                    problems.push(format!("{key}: sources mask {:?} does not match members {want:?}", r.sources));
                }
            }
            many => problems.push(format!("{key}: split over {} rows: {}", many.len(), many.iter().map(|r| describe(r)).collect::<Vec<_>>().join(", "))),
        }
    }
    assert!(problems.is_empty(), "{}\n  all rows:\n    {}", problems.join("\n"), describe_all(&sc.out));
}

#[test]
fn no_reconciled_row_beyond_the_expected_ones() {
    let sc = scene();
    let allowed: BTreeSet<String> = open_branded().into_iter().flat_map(members).collect();
    let strays: Vec<String> = sc.out.iter().filter(|r| !alias_keys(r).is_subset(&allowed)).map(describe).collect();
    assert!(strays.is_empty(), "rows with members outside the open branded expected rows:\n  {}", strays.join("\n  "));
    assert_eq!(sc.out.len(), open_branded().len(), "reconciled rows vs open branded expected rows:\n    {}", describe_all(&sc.out));
    assert_eq!(sc.stats.clusters, sc.out.len() as u64);
    assert_eq!(sc.stats.rows_in, sc.rows.len() as u64);
}

#[test]
fn closed_stores_are_absent() {
    let sc = scene();
    let closed: BTreeSet<String> = expected_rows().iter().filter(|r| r["status"] == "closed").flat_map(members).collect();
    assert!(!closed.is_empty());
    let imported: Vec<String> = sc.rows.iter().map(row_key).filter(|k| closed.contains(k)).collect();
    assert!(imported.is_empty(), "closed source rows were imported: {imported:?}");
    let hits = rows_touching(&sc.out, &closed);
    assert!(hits.is_empty(), "closed stores in the output: {}", hits.iter().map(|r| describe(r)).collect::<Vec<_>>().join(", "));
}

#[test]
fn unbranded_places_stay_out() {
    let sc = scene();
    let unbranded: BTreeSet<String> = expected_rows().iter().filter(|r| r["branded"] == false).flat_map(members).collect();
    assert!(!unbranded.is_empty());
    let hits = rows_touching(&sc.out, &unbranded);
    assert!(hits.is_empty(), "unbranded places in (or as) reconciled rows: {}", hits.iter().map(|r| describe(r)).collect::<Vec<_>>().join(", "));
    // They were imported, so it is the catalog that kept them out, and it counted them.
    let imported = sc.rows.iter().filter(|r| unbranded.contains(&row_key(r))).count();
    assert_eq!(imported, unbranded.len(), "the unbranded places are imported (the importers keep them)");
    assert!(sc.stats.rows_unbranded >= unbranded.len() as u64, "rows_unbranded {} < {}", sc.stats.rows_unbranded, unbranded.len());
}

#[test]
fn community_only_means_seen_only_in_osm() {
    let sc = scene();
    let scenario6: Vec<&Value> = open_branded().into_iter().filter(|r| r["scenario"] == "6").collect();
    assert_eq!(scenario6.len(), 1, "one scenario-6 row in expected.json");
    let want: BTreeSet<String> = members(scenario6[0]).into_iter().collect();
    let hits = rows_touching(&sc.out, &want);
    assert_eq!(hits.len(), 1, "scenario 6 ({want:?}) -> one row");
    assert!(hits[0].community_only, "scenario 6 (Portillo's, OSM only) must be community_only: {}", describe(hits[0]));
    // And in general: community_only exactly when every member is an OSM row.
    for r in &sc.out {
        let osm_only = r.aliases.iter().all(|(s, _)| *s == storemap_core::SourceType::Osm);
        assert_eq!(r.community_only, osm_only, "community_only for {}", describe(r));
    }
}

/// Scenario 7: two Tim Hortons ~300 m either side of the Niagara River, no country tag.
///
/// KNOWN FAILURE (data, not code) as of this writing: `countries.geojson` comes from
/// world-atlas `countries-10m.json` (Natural Earth 10m, quantized and simplified). Near Niagara
/// Falls its US/CA boundary is one straight 1.1 km edge, (-79.05499, 43.08798) to
/// (-79.06219, 43.09643), that runs through Niagara Falls NY: the NY store
/// (43.0883, -79.0650) falls 671 m inside Canada, the ON store is 871 m inside Canada, while
/// the real border is ~301 m from each. The test is kept as is: it documents a contract the
/// reference shapes cannot meet at 300 m; a finer boundary dataset makes it pass.
#[test]
fn border_rows_get_their_country_from_the_shapes() {
    let sc = scene();
    let want: BTreeMap<String, String> =
        expected()["border"]["expected_country"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string())).collect();
    assert_eq!(want.len(), 2);
    let mut problems = Vec::new();
    for (member, country) in &want {
        // The premise: nothing in the row tells the country.
        let src = sc.rows.iter().find(|r| &row_key(r) == member).unwrap_or_else(|| panic!("{member} not imported"));
        assert_eq!((&src.country, &src.state, &src.postcode), (&None, &None, &None), "{member} must carry no addr:country/state/postcode");
        let hits: Vec<&RowBuilder> = sc.out.iter().filter(|r| alias_keys(r).contains(member)).collect();
        assert_eq!(hits.len(), 1, "{member} in exactly one row");
        if &hits[0].country != country {
            let (lat, lng) = (src.lat, src.lng);
            let edge = distance_to_country_edge_m(country, lat, lng).map_or("n/a".to_string(), |d| format!("{d:.0} m"));
            problems.push(format!(
                "{member} at ({lat}, {lng}): country {}, expected {country}; expected.json puts it {} m from the \
                 OSM-derived border, inside {country}; countries.geojson puts it in {}, {edge} from {country}'s nearest edge",
                hits[0].country,
                expected()["border"]["distance_to_border_m"][member],
                hits[0].country,
            ));
        }
    }
    assert!(sc.stats.countries_backfilled >= 2, "countries_backfilled {}", sc.stats.countries_backfilled);
    assert!(
        problems.is_empty(),
        "border rows misplaced by point-in-polygon (see this test's doc: the reference boundary is coarser than 300 m here):\n  {}",
        problems.join("\n  ")
    );
}

/// A name two brands share goes to the one trading where the row is: the name-suggestion
/// index lists "BBVA" as a name of PNC Bank (which bought BBVA USA) and as BBVA's own, so a
/// "BBVA" bank in Madrid is BBVA and one in Birmingham, Alabama is PNC. The row carries no
/// country: it is located by its coordinates.
#[test]
fn a_shared_name_goes_to_the_brand_trading_where_the_row_is() {
    let r = reference();
    let bank = |lat: f64, lng: f64| SourceRow { name: "BBVA".into(), category: Some("amenity/bank".into()), lat, lng, ..Default::default() };
    let brand = |row: &SourceRow| r.catalog.match_row(row, &r.countries).and_then(|b| r.catalog.brands[b as usize].wikidata.clone());
    assert_eq!(brand(&bank(40.4168, -3.7038)).as_deref(), Some("Q806189"), "Madrid");
    assert_eq!(brand(&bank(33.5186, -86.8104)).as_deref(), Some("Q38928"), "Birmingham, Alabama");
    // With a country on the row, that country decides.
    let tagged = SourceRow { country: Some("MX".into()), ..bank(33.5186, -86.8104) };
    assert_eq!(brand(&tagged).as_deref(), Some("Q806189"), "a row that says Mexico");
}
