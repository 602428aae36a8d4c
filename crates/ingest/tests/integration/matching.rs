//! Sorting rows into brands in batches matched on other threads gives the buckets one
//! matching of every row at once gives: each brand's rows in the order they were read, and the
//! same counts (an import matches its batches on every core and takes them in order).

use storemap_ingest::import::{import_atp, import_osm, import_overture};
use storemap_ingest::parallel::in_order;
use storemap_ingest::reconcile::{BrandBuckets, Matched};
use storemap_ingest::SourceRow;

use crate::common::{fixtures_dir, reference};

/// A held row as the test compares it: source id, name, latitude and longitude bits.
type Held = (String, String, u64, u64);

/// Every brand's rows, and the counts.
fn described(b: &BrandBuckets) -> (Vec<Vec<Held>>, String) {
    let rows = b
        .rows
        .iter()
        .map(|bucket| bucket.iter().map(|r| (r.source_id().to_string(), r.name().to_string(), r.lat.to_bits(), r.lng.to_bits())).collect())
        .collect();
    (rows, format!("{:?} {:?} {}", b.stats, b.unmatched, b.other_shards))
}

#[test]
fn batches_matched_apart_and_taken_in_order_fill_the_buckets_as_one_matching_does() {
    let r = reference();
    let real = fixtures_dir().join("real");
    let mut rows: Vec<SourceRow> = Vec::new();
    rows.extend(import_osm(&real.join("osm/zugerland.osm.pbf")).unwrap().0);
    rows.extend(import_atp(&real.join("atp/output.zip")).unwrap().0);
    rows.extend(import_overture(&real.join("overture/boulder_places_2026-04-15.0.parquet")).unwrap().0);
    // The same rows again: brands already holding rows get more after them.
    rows.extend(rows.clone());
    let mut at_once = BrandBuckets::new(r.catalog.brands.len());
    at_once.add(&r.catalog, &r.countries, rows.clone());
    let (want, want_counts) = described(&at_once);
    assert!(want.iter().filter(|b| !b.is_empty()).count() > 10, "the samples fill more than a few brands");
    assert!(at_once.stats.rows_unbranded > 0 && at_once.stats.rows_unbranded < rows.len() as u64);

    for batch in [1, 7, 97, 4096] {
        let mut apart = BrandBuckets::new(r.catalog.brands.len());
        let chunks: Vec<Vec<SourceRow>> = rows.chunks(batch).map(<[SourceRow]>::to_vec).collect();
        in_order(2, |c: Vec<SourceRow>| Matched::new(&r.catalog, &r.countries, None, c), |m| apart.take(m), |submit| chunks.into_iter().for_each(&mut *submit));
        let (got, counts) = described(&apart);
        assert_eq!(counts, want_counts, "batches of {batch}");
        assert!(got == want, "batches of {batch}: a brand's rows differ");
    }
}
