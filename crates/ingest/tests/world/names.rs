//! Store names in the synthetic world: a chain's small stores carry the format word the
//! name-suggestion index gives that same brand (Walmart Express), fast food its "Express"
//! counters, and no other chain a format it does not run (no "H&M Express"); a chain is named
//! for itself, not for a format the index lists as widely. What each brand runs is read here
//! from `brands.jsonl` itself, not from the catalog.

use std::collections::HashSet;

use storemap_ingest::world::Generator;

use crate::common::{land, reference, reference_dir};

const FORMAT_WORDS: [&str; 4] = ["Express", "Local", "Mini", "Metro"];

/// The names of every NSI entry under this Wikidata item.
fn nsi_names(qid: &str) -> HashSet<String> {
    let text = std::fs::read_to_string(reference_dir().join("brands.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|b| b["wikidata"].as_str() == Some(qid))
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn small_stores_are_named_for_formats_their_chains_run() {
    let r = reference();
    let gen = Generator::new(&r.catalog, &r.cities, &r.zips, land(), 0.25, 7);
    // (Wikidata item, the name its stores go by, the format it runs)
    let cases = [
        ("Q483551", "Walmart", Some("Express")),
        ("Q38076", "McDonald's", Some("Express")),
        ("Q188326", "H&M", None),
        ("Q54078", "IKEA", None),
        // Tesco Express is a Wikidata item, and so a catalog brand, of its own.
        ("Q487494", "Tesco", None),
        // The index lists "Pizza Hut Express" (250 countries) a little more widely than "Pizza
        // Hut" (246): the chain is still Pizza Hut, and Express its counters.
        ("Q191615", "Pizza Hut", Some("Express")),
    ];
    for (qid, base, runs) in cases {
        let names = nsi_names(qid);
        let fast_food = r.catalog.brands.iter().find(|b| b.wikidata.as_deref() == Some(qid)).is_some_and(|b| b.class == "food");
        // The expectation holds in the index: a format is an entry of the same item, or the
        // fast-food "Express".
        let listed = FORMAT_WORDS.into_iter().find(|w| names.contains(&format!("{base} {w}")));
        assert_eq!(listed.or(fast_food.then_some("Express")), runs, "{base}: {names:?}");

        let rank = r.catalog.brands.iter().position(|b| b.wikidata.as_deref() == Some(qid)).unwrap();
        assert_eq!(r.catalog.brands[rank].name, base, "the brand of {qid}");
        let world = gen.brand(rank);
        assert!(world.stores.len() >= 50, "{base}: {} stores", world.stores.len());
        let with = |w: &str| world.sightings.iter().filter(|s| s.name.starts_with(&format!("{base} {w}"))).count();
        for w in FORMAT_WORDS {
            if Some(w) == runs {
                assert!(with(w) > 0, "{base} runs {base} {w}, none of its sightings is named so");
            } else {
                assert_eq!(with(w), 0, "{base} {w} is no format of {base}");
            }
        }
    }
}
