//! A build in shards (`--shard K/N`, then `merge`) writes the snapshot the one-process build
//! writes from the same inputs: the same bytes, the same ids carried over from the snapshot it
//! replaces, the same history. A merge refuses parts that are missing, given twice, of another
//! build, incomplete or damaged, and leaves the serving snapshot as it was.

use std::path::{Path, PathBuf};

use storemap_core::{Snapshot, SourceType};
use storemap_ingest::pipeline::{self, MergeOptions, Phases, SourcePaths, SNAPSHOT_FILE};
use storemap_ingest::shard::{partition, weight, Shard, PART_MANIFEST, PART_ROWS};

use crate::churn::{options, DAY};
use crate::common::{as_of, reference, reference_paths, TempDir};

// The one-process build: generates the scale-0.01 seed-7 world into `dir/sources` and builds
// its snapshot.
use crate::churn::build as build_whole;

/// Every shard of `n` over the sources the one-process build generated in `sources_of`, as the
/// synthetic build reads them (its options say which world they are), each part in `parts`.
fn build_parts(sources_of: &Path, parts: &Path, n: u32, as_of: i64, disabled: Vec<SourceType>) -> Vec<PathBuf> {
    (1..=n)
        .map(|k| {
            let dir = parts.join(format!("part-{k}"));
            let opts = options(&parts.join(format!("scratch-{k}")), as_of, disabled.clone());
            let s = pipeline::import_sources_part(&SourcePaths::under(&sources_of.join("sources")), &opts, Shard { k, n }, &dir, &mut Phases::new(false))
                .unwrap_or_else(|e| panic!("shard {k}/{n}: {e}"));
            assert_eq!(s.shard, format!("{k}/{n}"));
            dir
        })
        .collect()
}

fn merge(parts: &[PathBuf], data_dir: &Path) -> storemap_ingest::Result<pipeline::BuildSummary> {
    let opts = MergeOptions {
        data_dir: data_dir.to_path_buf(),
        reference: reference_paths(),
        keep_history: storemap_core::HISTORY_DEFAULT_KEEP,
        rewrite_history: false,
        record: Default::default(),
    };
    pipeline::merge_parts(parts, &opts, &mut Phases::new(false))
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir` but the generated sources (which only the one-process folder holds)
/// and the generator's previous truth, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    crate::common::files_under(dir, |rel| rel == "sources" || rel.ends_with("truth.prev.csv"))
}

#[test]
fn three_shards_merged_are_the_one_process_build_and_so_is_a_refresh_in_two() {
    let t = TempDir::new("shards");
    let (whole, merged, parts) = (t.path().join("whole"), t.path().join("merged"), t.path().join("parts"));
    let first = build_whole(&whole, as_of(), vec![]);
    let three = build_parts(&whole, &parts.join("first"), 3, as_of(), vec![]);
    // Each shard holds about a third of the rows (the partition balances by published store
    // counts, not by these rows, so not exactly).
    let rows: Vec<u64> =
        three.iter().map(|p| serde_json::from_slice::<serde_json::Value>(&read(&p.join(PART_MANIFEST))).unwrap()["rows"].as_u64().unwrap()).collect();
    let total: u64 = rows.iter().sum();
    assert!(rows.iter().all(|&r| r * 3 > total * 7 / 10 && r * 3 < total * 13 / 10), "rows per shard {rows:?} of {total}");
    // Given in any order.
    let got = merge(&[three[2].clone(), three[0].clone(), three[1].clone()], &merged).unwrap_or_else(|e| panic!("merge: {e}"));
    assert_eq!(got.snapshot_version, first.snapshot_version);
    assert_eq!(got.rows, first.rows);
    assert_eq!(got.reconcile, first.reconcile);
    assert_eq!(got.imports, first.imports);
    assert_eq!(got.history, first.history);
    assert!(read(&merged.join(SNAPSHOT_FILE)) == read(&whole.join(SNAPSHOT_FILE)), "the merged snapshot differs from the one-process build's");

    // A week later without AllThePlaces: stores keep their ids through the other sources' ids,
    // which the merge decides from the snapshot it replaces.
    let later = as_of() + 7 * DAY;
    let second = build_whole(&whole, later, vec![SourceType::Atp]);
    assert!(second.reconcile.ids_kept_by_source_id > 0, "{:?}", second.reconcile);
    let two = build_parts(&whole, &parts.join("second"), 2, later, vec![SourceType::Atp]);
    let got = merge(&two, &merged).unwrap_or_else(|e| panic!("merge: {e}"));
    assert_eq!(got.reconcile, second.reconcile);
    assert_eq!(got.history, second.history);
    let (a, b) = (files(&whole), files(&merged));
    assert_eq!(a.iter().map(|f| &f.0).collect::<Vec<_>>(), b.iter().map(|f| &f.0).collect::<Vec<_>>(), "the same files");
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs between the one-process build and the merge");
    }
    let snap = Snapshot::load(&merged.join(SNAPSHOT_FILE)).unwrap();
    assert_eq!(snap.meta().as_of, storemap_core::format_iso(later));
}

#[test]
fn a_merge_refuses_parts_that_do_not_make_one_whole_build_and_keeps_the_serving_snapshot() {
    let t = TempDir::new("refusals");
    let (whole, served, parts) = (t.path().join("whole"), t.path().join("served"), t.path().join("parts"));
    build_whole(&whole, as_of(), vec![]);
    let good = build_parts(&whole, &parts.join("good"), 2, as_of(), vec![]);
    let other = build_parts(&whole, &parts.join("other"), 2, as_of() + DAY, vec![]);
    merge(&good, &served).unwrap_or_else(|e| panic!("merge: {e}"));
    let serving = read(&served.join(SNAPSHOT_FILE));
    let refused = |parts: &[PathBuf], expect: &[&str]| {
        let err = merge(parts, &served).map(|_| ()).expect_err(&format!("a merge that must be refused: {expect:?}")).to_string();
        for e in expect {
            assert!(err.contains(e), "{err:?} should say {e:?}");
        }
        assert!(read(&served.join(SNAPSHOT_FILE)) == serving, "a refused merge changed the serving snapshot ({err})");
    };
    refused(&good[..1], &["missing shard 2/2"]);
    refused(&[good[0].clone(), good[0].clone()], &["shard 1/2 is given twice"]);
    let dates = format!("as_of {} against {}", storemap_core::format_iso(as_of()), storemap_core::format_iso(as_of() + DAY));
    refused(&[good[0].clone(), other[1].clone()], &["parts of different builds", &dates]);
    refused(&[], &["no parts given"]);
    // Shard 2 of a 3-way split beside shard 1 of a 2-way one.
    let three = build_parts(&whole, &parts.join("three"), 3, as_of(), vec![]);
    refused(&[good[0].clone(), three[1].clone()], &["share N"]);

    // Two parts that split the brands otherwise (as two versions of the partition would): each
    // part's own counts add up, their sum does not.
    let split = parts.join("split");
    std::fs::create_dir_all(&split).unwrap();
    std::fs::copy(good[1].join(PART_ROWS), split.join(PART_ROWS)).unwrap();
    let mut m: serde_json::Value = serde_json::from_slice(&read(&good[1].join(PART_MANIFEST))).unwrap();
    let kept = m["imports"][0]["rows_kept"].as_u64().unwrap();
    m["imports"][0]["rows_kept"] = (kept - 1).into();
    m["other_shards"][0] = (m["other_shards"][0].as_u64().unwrap() + 1).into();
    std::fs::write(split.join(PART_MANIFEST), serde_json::to_vec(&m).unwrap()).unwrap();
    refused(&[good[0].clone(), split], &["split the brands differently"]);

    // A part whose run died before its manifest, and one whose rows were damaged after.
    let cut = parts.join("cut");
    std::fs::create_dir_all(&cut).unwrap();
    std::fs::copy(good[1].join(PART_ROWS), cut.join(PART_ROWS)).unwrap();
    refused(&[good[0].clone(), cut.clone()], &["not a complete part", "run its shard again"]);
    std::fs::copy(good[1].join(PART_MANIFEST), cut.join(PART_MANIFEST)).unwrap();
    let mut rows = read(&cut.join(PART_ROWS));
    let mid = rows.len() / 2;
    rows[mid] ^= 0x20;
    std::fs::write(cut.join(PART_ROWS), &rows).unwrap();
    refused(&[good[0].clone(), cut.clone()], &["damaged part"]);
    rows.truncate(mid);
    std::fs::write(cut.join(PART_ROWS), &rows).unwrap();
    refused(&[good[0].clone(), cut], &["damaged part"]);
}

/// The partition: every brand in exactly one shard, the same for the same catalog and N, and the
/// published store counts spread evenly (the heaviest shard within 1 % of the lightest).
#[test]
fn the_brand_partition_is_fixed_complete_and_balanced() {
    let catalog = &reference().catalog;
    for n in [1u32, 2, 4, 16] {
        let owner = partition(catalog, n);
        assert_eq!(owner, partition(catalog, n));
        assert!(owner.iter().all(|&o| o < n));
        let mut load = vec![0u64; n as usize];
        for (b, &o) in owner.iter().enumerate() {
            load[o as usize] += weight(catalog.brands[b].known_stores);
        }
        let (lo, hi) = (*load.iter().min().unwrap(), *load.iter().max().unwrap());
        assert!(hi as f64 <= lo as f64 * 1.01, "n = {n}: loads {load:?}");
        for k in 1..=n {
            let mine = Shard { k, n }.brands(catalog);
            assert_eq!(mine.iter().filter(|&&m| m).count(), owner.iter().filter(|&&o| o == k - 1).count());
        }
    }
}

/// Shards run one after another in one data folder generate the synthetic world once: the
/// second finds the first's world by its stamp, and a folder whose stamp names another world
/// (here another date) is generated again. Both parts are those of the same build.
#[test]
fn shards_in_one_folder_generate_the_world_once() {
    let t = TempDir::new("one-world");
    let data = t.path().join("data");
    let run = |k: u32, as_of: i64| {
        let mut phases = Phases::new(false);
        let s = pipeline::build_synthetic_part(
            &options(&data, as_of, vec![]),
            0.01,
            7,
            Shard { k, n: 2 },
            &t.path().join(format!("part-{k}-{as_of}")),
            &mut phases,
        )
        .unwrap_or_else(|e| panic!("shard {k}: {e}"));
        (s, phases.seconds)
    };
    let (_, first) = run(1, as_of());
    assert!(first.contains_key("generate sources"), "{first:?}");
    let (_, second) = run(2, as_of());
    assert!(!second.contains_key("generate sources") && second.contains_key("generate sources (already there)"), "{second:?}");
    let parts = [t.path().join(format!("part-1-{}", as_of())), t.path().join(format!("part-2-{}", as_of()))];
    merge(&parts, &t.path().join("merged")).unwrap_or_else(|e| panic!("merge: {e}"));
    let (_, later) = run(1, as_of() + DAY);
    assert!(later.contains_key("generate sources"), "another date is another world: {later:?}");
}
