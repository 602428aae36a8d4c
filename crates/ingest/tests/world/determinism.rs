//! The synthetic build is a pure function of (scale, seed, as_of): the same inputs give the
//! same snapshot bytes, and another seed gives another snapshot.

use storemap_ingest::pipeline::SNAPSHOT_FILE;

use crate::common::{build_synthetic, shared_build, TempDir, SCALE, SEED};

/// Builds into a fresh temp folder and returns the snapshot bytes (the folder is removed).
fn snapshot_bytes(scale: f64, seed: u64) -> (Vec<u8>, String) {
    let dir = TempDir::new(&format!("seed{seed}"));
    let summary = build_synthetic(dir.path(), scale, seed);
    let path = dir.path().join(SNAPSHOT_FILE);
    (std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())), summary.snapshot_version)
}

#[test]
fn same_seed_gives_byte_identical_snapshots() {
    let a = shared_build();
    let (b, version_b) = snapshot_bytes(SCALE, SEED);
    assert!(a.snapshot_bytes.len() > 1024, "a real snapshot ({} bytes)", a.snapshot_bytes.len());
    if a.snapshot_bytes != b {
        let first = a.snapshot_bytes.iter().zip(&b).position(|(x, y)| x != y);
        panic!("two builds with seed {SEED} differ: sizes {} vs {}, first differing byte at {first:?}", a.snapshot_bytes.len(), b.len());
    }
    assert_eq!(a.summary.snapshot_version, version_b);
}

#[test]
fn another_seed_gives_another_snapshot() {
    let a = shared_build();
    let (c, version_c) = snapshot_bytes(SCALE, SEED + 1);
    assert!(a.snapshot_bytes != c, "seeds {SEED} and {} built byte-identical snapshots", SEED + 1);
    assert_ne!(a.summary.snapshot_version, version_c, "the snapshot version identifies the content");
}

/// The file's last 8 bytes are the CRC-32 (little-endian, then four zeros) of every byte
/// before them, computed here with the crc32fast crate directly.
#[test]
fn the_snapshot_carries_a_checksum_and_a_damaged_copy_is_refused() {
    let bytes = &shared_build().snapshot_bytes;
    let (body, tail) = bytes.split_at(bytes.len() - 8);
    assert_eq!(tail[..4], crc32fast::hash(body).to_le_bytes());
    assert_eq!(tail[4..], [0, 0, 0, 0]);
    assert!(storemap_core::Snapshot::from_bytes("good", bytes).is_ok());
    // One bit flipped in the middle of the rows, or the file cut short: refused, by name.
    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 1;
    let err = storemap_core::Snapshot::from_bytes("flipped", &flipped).expect_err("a flipped bit must not load");
    assert!(err.to_string().contains("checksum mismatch"), "{err}");
    let cut = &bytes[..bytes.len() - 100];
    assert!(storemap_core::Snapshot::from_bytes("cut", cut).is_err());
}

/// The pipeline reads the sources at once, each into buckets of its own, and joins them in a
/// fixed order: that must give each brand the rows, in the order, and the counts that reading
/// them one after another into one set of buckets gives (which is what makes the snapshot of
/// a build on many cores the snapshot of a build on one).
#[test]
fn sources_imported_apart_and_joined_fill_the_buckets_as_one_after_another() {
    use storemap_ingest::import::{import_atp, import_fsq, import_osm, import_overture};
    use storemap_ingest::reconcile::BrandBuckets;

    let dir = TempDir::new("apart");
    build_synthetic(dir.path(), SCALE, SEED);
    let sources = dir.path().join("sources");
    let r = crate::common::reference();
    let rows = [
        import_atp(&sources.join("atp")).expect("atp").0,
        import_overture(&sources.join("overture")).expect("overture").0,
        import_fsq(&sources.join("fsq")).expect("fsq").0,
        import_osm(&sources.join("osm")).expect("osm").0,
    ];
    let n = r.catalog.brands.len();
    let mut one = BrandBuckets::new(n);
    let mut joined = BrandBuckets::new(n);
    for batch in &rows {
        one.add(&r.catalog, &r.countries, batch.clone());
        let mut apart = BrandBuckets::new(n);
        apart.add(&r.catalog, &r.countries, batch.clone());
        joined.append(apart);
    }
    // Each brand's rows as reconciliation takes them (joined buckets keep each import apart
    // until then).
    let ids = |b: &mut BrandBuckets| -> Vec<Vec<(storemap_core::SourceType, String)>> {
        (0..n).map(|i| b.take_brand(i).iter().map(|x| (x.source, x.source_id().to_string())).collect()).collect()
    };
    assert!(one.stats.rows_in > 1000, "a real world ({} rows)", one.stats.rows_in);
    assert!(ids(&mut one) == ids(&mut joined), "the brands' rows differ, or come in another order");
    assert_eq!((one.stats.rows_in, one.stats.rows_unbranded), (joined.stats.rows_in, joined.stats.rows_unbranded));
    assert_eq!(one.stats.unbranded_samples, joined.stats.unbranded_samples);
    assert_eq!(one.unmatched, joined.unmatched);
}

/// Generation holds a window of brands and stores at once, to bound memory; a world generated
/// through a tiny window (three brands, 500 stores, so that a batch holds one brand per core
/// and ends at every few brands) is the default window's byte for byte.
#[test]
fn generated_files_do_not_depend_on_the_window() {
    use storemap_ingest::world::{generate_within, Window};

    let r = crate::common::reference();
    let files = |window: Window, tag: &str| -> (TempDir, Vec<(String, Vec<u8>)>) {
        let dir = TempDir::new(tag);
        let summary = generate_within(window, &r.catalog, &r.cities, &r.zips, crate::common::land(), dir.path(), SCALE, SEED, crate::common::as_of())
            .unwrap_or_else(|e| panic!("generate ({tag}): {e}"));
        assert!(summary.true_stores > 1000, "a real world ({} stores)", summary.true_stores);
        let out = crate::common::files_under(dir.path(), |_| false);
        (dir, out)
    };
    let (_a, default) = files(Window::DEFAULT, "window-default");
    let (_b, tiny) = files(Window { brands: 3, stores: 500.0 }, "window-tiny");
    assert!(default.len() >= 6, "the four sources and the truth files: {:?}", default.iter().map(|f| &f.0).collect::<Vec<_>>());
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&default), names(&tiny));
    for ((name, a), (_, b)) in default.iter().zip(&tiny) {
        assert!(a == b, "{name} differs: {} against {} bytes", a.len(), b.len());
    }
}
