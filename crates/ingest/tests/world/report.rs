//! `storemap data report`: the figures of a synthetic build, and the dedup metric itself on a
//! snapshot whose exact scores are known.

use std::path::Path;

use storemap_core::{BrandRecord, RowBuilder, Snapshot, SnapshotBuilder, SnapshotMeta, SourceMask, SourceType};
use storemap_ingest::report::{dedup_scores, Dedup};

use crate::common::{shared_build, tables_dir, TempDir, AS_OF_ISO};

#[test]
fn report_on_a_synthetic_build() {
    let b = shared_build();
    let r = &b.report;
    assert_eq!(r.pool_points, b.snapshot_rows as u64, "pool_points == rows of the snapshot");
    assert_eq!(r.pool_points, b.summary.rows, "pool_points == rows the build wrote");
    assert!(r.verified_rows > 0, "no verified rows");
    assert!(r.verified_rows <= r.pool_points, "verified {} > pool {}", r.verified_rows, r.pool_points);

    let tickers_csv = tables_dir().join("tickers.csv");
    let ticker_rows =
        csv::Reader::from_path(&tickers_csv).expect("data/tickers.csv").records().collect::<Result<Vec<_>, _>>().expect("tickers.csv records").len();
    assert!(ticker_rows > 0);
    assert_eq!(r.tickers, ticker_rows as u64, "every row of data/tickers.csv maps to a brand");

    assert!(r.countries >= 100, "countries {}", r.countries);
    assert!(r.brands > 0);
    assert!(
        r.brands_with_verified_rows > 0 && r.brands_with_verified_rows <= r.brands,
        "brands_with_verified_rows {} of {}",
        r.brands_with_verified_rows,
        r.brands
    );
    assert!(r.synthetic);
    assert_eq!(r.as_of, AS_OF_ISO);
    assert_eq!(r.snapshot_version, b.summary.snapshot_version);

    let d = r.dedup.as_ref().expect("dedup scores: the synthetic build writes sources/truth.csv");
    assert!(d.true_pairs > 0 && d.predicted_pairs > 0, "{d:?}");
    assert!(d.precision >= 0.995, "dedup precision {} < 0.995 ({d:?})", d.precision);
    assert!(d.recall >= 0.99, "dedup recall {} < 0.99 ({d:?})", d.recall);
    assert!(b.truth_rows as u64 >= r.pool_points, "truth.csv lists every source row");
}

fn row(brand: u32, lat: f64, aliases: &[(SourceType, &str)]) -> RowBuilder {
    let mut sources = SourceMask::default();
    for (s, _) in aliases {
        sources.insert(*s);
    }
    RowBuilder {
        brand,
        lat,
        lng: -87.63,
        id: (lat * 1e6) as u64,
        name: "Test".into(),
        country: "US".into(),
        confidence: 0.9,
        provenance: true,
        sources,
        aliases: aliases.iter().map(|(s, id)| (*s, id.to_string())).collect(),
        ..RowBuilder::default()
    }
}

fn write_snapshot(path: &Path, rows: &[RowBuilder]) -> Snapshot {
    let mut b = SnapshotBuilder::new(SnapshotMeta::default(), vec![BrandRecord::new("Test Brand")], Vec::new(), Vec::new());
    for r in rows {
        b.push(r);
    }
    b.write(path).expect("snapshot written");
    Snapshot::load(path).expect("snapshot loads")
}

#[test]
fn dedup_scores_on_a_hand_made_snapshot() {
    let dir = TempDir::new("dedup");
    // Truth: store A was seen by atp:a1, osm:a2, fsq:a3 and by atp:gone (a source row that
    // never reached the snapshot, e.g. closed); store B by osm:b1. The `atp:b1` twin id of
    // another source is a trap: ids are per source.
    let truth = dir.path().join("truth.csv");
    std::fs::write(
        &truth,
        "source,source_id,store,closed\n\
         atp,a1,A,false\n\
         osm,a2,A,false\n\
         fsq,a3,A,false\n\
         atp,gone,A,true\n\
         osm,b1,B,false\n",
    )
    .unwrap();

    // Rows: {a1, a2} (right), {a3, b1} (wrong), {overture:x} (not in the truth: not scored).
    let snap = write_snapshot(
        &dir.path().join("snapshot.smap"),
        &[
            row(0, 41.1, &[(SourceType::Atp, "a1"), (SourceType::Osm, "a2")]),
            row(0, 41.2, &[(SourceType::Fsq, "a3"), (SourceType::Osm, "b1")]),
            row(0, 41.3, &[(SourceType::Overture, "x"), (SourceType::Atp, "b1")]),
        ],
    );
    assert_eq!(snap.row_count(), 3);
    // Predicted pairs: (a1,a2), (a3,b1) = 2; correct: (a1,a2) = 1; true pairs among rows that
    // reached the snapshot: A has a1, a2, a3 -> 3 pairs, B has b1 -> 0.
    let d = dedup_scores(&snap, &truth).expect("dedup_scores");
    assert_eq!(d, Dedup { precision: 0.5, recall: 1.0 / 3.0, predicted_pairs: 2, true_pairs: 3, correct_pairs: 1 });

    // The same source rows grouped as the truth says: perfect scores.
    let snap = write_snapshot(
        &dir.path().join("perfect.smap"),
        &[row(0, 41.1, &[(SourceType::Atp, "a1"), (SourceType::Osm, "a2"), (SourceType::Fsq, "a3")]), row(0, 41.2, &[(SourceType::Osm, "b1")])],
    );
    let d = dedup_scores(&snap, &truth).expect("dedup_scores");
    assert_eq!((d.precision, d.recall, d.predicted_pairs, d.true_pairs, d.correct_pairs), (1.0, 1.0, 3, 3, 3));

    // Every source row alone: nothing predicted (precision vacuously 1), nothing found.
    let snap = write_snapshot(
        &dir.path().join("split.smap"),
        &[
            row(0, 41.1, &[(SourceType::Atp, "a1")]),
            row(0, 41.2, &[(SourceType::Osm, "a2")]),
            row(0, 41.3, &[(SourceType::Fsq, "a3")]),
            row(0, 41.4, &[(SourceType::Osm, "b1")]),
        ],
    );
    let d = dedup_scores(&snap, &truth).expect("dedup_scores");
    assert_eq!((d.recall, d.correct_pairs, d.true_pairs), (0.0, 0, 3));
}
