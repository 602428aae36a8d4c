//! The synthetic sources write opening hours as their publishers do (`world::hours`): OSM for
//! about half its shops, with mappers' habits and a few values the grammar refuses; AllThePlaces
//! for most of its spiders, cleanly; Overture and Foursquare never. The build reads them back,
//! counts the refused ones, and the rows carry hours that follow what chains do and what the law
//! allows: Sunday closing in Germany, konbini that never close in Japan, fuel often round the
//! clock. Read from the source files and the snapshot, not from the generator's functions.

use std::collections::BTreeMap;

use storemap_core::{Snapshot, SourceType, TextColumn};
use storemap_ingest::pipeline::SNAPSHOT_FILE;

use crate::common::{build_synthetic, TempDir};

/// Each OSM line's opening_hours (None where the tag is absent).
fn osm_hours(dir: &std::path::Path) -> Vec<Option<String>> {
    let text = std::fs::read_to_string(dir.join("sources/osm/places.geojsonseq")).expect("the OSM export");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: serde_json::Value = serde_json::from_str(l.trim_start_matches('\u{1e}')).expect("a GeoJSON line");
            f["properties"]["opening_hours"].as_str().map(str::to_string)
        })
        .collect()
}

/// Features of every ATP spider file with and without hours, and spiders with none at all.
fn atp_hours(dir: &std::path::Path) -> (u64, u64, u64, u64) {
    let (mut with, mut without, mut spiders, mut silent) = (0, 0, 0, 0);
    for entry in std::fs::read_dir(dir.join("sources/atp")).expect("the ATP folder") {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(entry.expect("an entry").path()).expect("a spider file")).expect("JSON");
        let features = v["features"].as_array().expect("features");
        let n = features.iter().filter(|f| f["properties"]["opening_hours"].is_string()).count() as u64;
        with += n;
        without += features.len() as u64 - n;
        spiders += 1;
        silent += u64::from(n == 0);
    }
    (with, without, spiders, silent)
}

#[test]
fn the_sources_write_hours_with_their_publishers_habits_and_the_rows_follow_the_law() {
    let dir = TempDir::new("hours");
    let summary = build_synthetic(dir.path(), 0.02, 11);
    let report = |s: SourceType| summary.imports.iter().find(|i| i.source == s.as_str()).unwrap_or_else(|| panic!("{} imported", s.as_str()));

    // OpenStreetMap: about half the shops, some unpadded or 00:00-24:00, a few refused.
    let osm = osm_hours(dir.path());
    let given = osm.iter().flatten().count();
    let share = given as f64 / osm.len() as f64;
    assert!((0.4..0.6).contains(&share), "OSM gives hours for {share:.2} of its shops");
    let refused = osm.iter().flatten().filter(|h| h.contains("am-")).count() as u64;
    assert!(refused > 0, "mappers write some values the grammar refuses");
    assert_eq!(report(SourceType::Osm).hours_invalid, refused, "the import counts every refused value and no other");
    assert_eq!(report(SourceType::Osm).rows_with_hours, given as u64 - refused, "the rest parse (unpadded ones mended)");
    let unpadded = osm.iter().flatten().filter(|h| h.split([' ', '-', ',', ';']).any(|t| t.len() == 4 && t.as_bytes()[1] == b':')).count();
    assert!(unpadded > 0, "some hours written without a leading zero");
    assert!(osm.iter().flatten().any(|h| h == "Mo-Su 00:00-24:00"), "some round-the-clock places written as 00:00-24:00");

    // AllThePlaces: spiders that collect hours give them for nearly every store; some collect none.
    let (with, without, spiders, silent) = atp_hours(dir.path());
    let share = with as f64 / (with + without) as f64;
    assert!((0.6..0.9).contains(&share), "ATP: {with} features with hours, {without} without");
    assert!(silent > 0 && silent < spiders / 2, "{silent} of {spiders} spiders collect no hours");
    // Every kept feature's hours parse (features marked closed are skipped before hours count).
    let atp = report(SourceType::Atp);
    assert_eq!(atp.hours_invalid, 0, "a spider writes clean hours");
    assert!(
        atp.rows_with_hours <= with && atp.rows_with_hours + atp.rows_closed >= with,
        "ATP: {} rows with hours of {with} features with hours",
        atp.rows_with_hours
    );
    // Overture's and Foursquare's open data has no hours at all.
    assert_eq!(report(SourceType::Overture).rows_with_hours + report(SourceType::Fsq).rows_with_hours, 0);

    // The rows: hours by kind of store and country.
    let snap = Snapshot::load(&dir.path().join(SNAPSHOT_FILE)).expect("the snapshot loads");
    let mut by: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for rec in snap.brands() {
        let category = rec.category.as_deref().unwrap_or("");
        for r in rec.row_start as usize..rec.row_end as usize {
            let h = snap.row_text(TextColumn::OpeningHours, r);
            if !h.is_empty() {
                by.entry((category, snap.row_country(r))).or_default().push(h);
            }
        }
    }
    let all = |category: &str, country: &str| by.get(&(category, country)).cloned().unwrap_or_default();
    let de_supermarkets = all("shop/supermarket", "DE");
    assert!(de_supermarkets.len() > 20, "{} German supermarket rows with hours", de_supermarkets.len());
    assert!(de_supermarkets.iter().all(|h| !h.contains("Su") && !h.contains("24/7")), "German supermarkets close on Sunday: {:?}", &de_supermarkets[..5]);
    let us_supermarkets = all("shop/supermarket", "US");
    assert!(us_supermarkets.iter().filter(|h| h.contains("Su")).count() * 2 > us_supermarkets.len(), "most US supermarkets open on Sunday");
    let jp_konbini = all("shop/convenience", "JP");
    assert!(jp_konbini.len() > 20, "{} Japanese convenience rows with hours", jp_konbini.len());
    assert!(jp_konbini.iter().all(|h| *h == "24/7" || *h == "Mo-Su 00:00-24:00"), "konbini never close: {:?}", jp_konbini.iter().find(|h| **h != "24/7"));
    let fuel: Vec<&str> = by.iter().filter(|((c, _), _)| *c == "amenity/fuel").flat_map(|(_, v)| v.iter().copied()).collect();
    let round_the_clock = fuel.iter().filter(|h| **h == "24/7" || **h == "Mo-Su 00:00-24:00").count() as f64 / fuel.len() as f64;
    assert!((0.3..0.6).contains(&round_the_clock), "{round_the_clock:.2} of fuel stations open round the clock");
}
