//! Parquet writing for the Overture and Foursquare writers: the file (polars-parquet's Arrow
//! writer), and the few column shapes they build (strings, structs, one-element lists).

use std::path::Path;

use polars_arrow::array::{Array, BinaryViewArray, ListArray, PrimitiveArray, StructArray, Utf8ViewArray};
use polars_arrow::bitmap::Bitmap;
use polars_arrow::datatypes::{ArrowDataType, ArrowSchema, Field};
use polars_arrow::offset::{Offsets, OffsetsBuffer};
use polars_arrow::record_batch::RecordBatchT;
use polars_arrow::types::NativeType;
use polars_error::PolarsResult;
use polars_parquet::write::{
    array_to_columns, compress, get_dtype_encoding, schema_to_metadata_key, to_parquet_schema, CompressedPage, CompressionOptions, DynIter,
    DynStreamingIterator, Encoding, FallibleStreamingIterator, FileWriter, KeyValue, ParquetType, StatisticsOptions, Version, WriteOptions,
};
use rayon::iter::{IndexedParallelIterator, IntoParallelIterator, ParallelIterator};

use crate::error::{IngestError, Result};

/// A named column.
pub type Column = (Field, Box<dyn Array>);

/// How a file is cut and what its footer carries beyond the columns.
pub struct Layout {
    pub row_group_rows: usize,
    /// Min, max and null count per column chunk (Overture writes them; a cut by area needs them).
    pub statistics: bool,
    /// Extra footer entries (GeoParquet's `geo`).
    pub metadata: Vec<(String, String)>,
}

impl Default for Layout {
    /// polars' defaults, which the files were written with before.
    fn default() -> Self {
        Layout { row_group_rows: 512 * 512, statistics: true, metadata: Vec::new() }
    }
}

/// Writes `columns` (all of one length) to `path`, Snappy-compressed, in row groups of
/// `layout.row_group_rows`, the Arrow schema in the footer as Arrow writers put it.
#[cfg(test)]
pub fn write_columns(path: &Path, columns: Vec<Column>, layout: &Layout) -> Result<()> {
    let len = columns.first().map_or(0, |c| c.1.len());
    let (fields, arrays): (Vec<Field>, Vec<Box<dyn Array>>) = columns.into_iter().unzip();
    let step = layout.row_group_rows.max(1);
    let groups = (0..len).step_by(step).map(|start| arrays.iter().map(|a| a.sliced(start, step.min(len - start))).collect()).collect();
    write_groups(path, fields, groups, layout)
}

/// Writes each of `groups` (one array per field, all of one length) as a row group.
pub fn write_groups(path: &Path, fields: Vec<Field>, groups: Vec<Vec<Box<dyn Array>>>, layout: &Layout) -> Result<()> {
    let mut file = OpenFile::create(path, fields, layout)?;
    for arrays in groups {
        file.write(arrays)?;
    }
    file.end(layout)
}

/// A Parquet file being written, a row group at a time.
struct OpenFile {
    name: String,
    writer: FileWriter<std::io::BufWriter<std::fs::File>>,
    schema: ArrowSchema,
    /// The schema's columns as Parquet types, and each one's encoding, for every row group.
    types: Vec<ParquetType>,
    encodings: Vec<Vec<Encoding>>,
    options: WriteOptions,
}

/// A column chunk's pages, made and compressed beforehand, handed to the file writer one by one.
struct MadePages {
    pages: std::vec::IntoIter<CompressedPage>,
    current: Option<CompressedPage>,
}

impl FallibleStreamingIterator for MadePages {
    type Item = CompressedPage;
    type Error = polars_error::PolarsError;

    fn advance(&mut self) -> PolarsResult<()> {
        self.current = self.pages.next();
        Ok(())
    }

    fn get(&self) -> Option<&CompressedPage> {
        self.current.as_ref()
    }
}

impl OpenFile {
    fn create(path: &Path, fields: Vec<Field>, layout: &Layout) -> Result<OpenFile> {
        let name = path.display().to_string();
        let schema: ArrowSchema = fields.into_iter().map(|f| (f.name.clone(), f)).collect();
        let options = WriteOptions {
            statistics: if layout.statistics { StatisticsOptions::full() } else { StatisticsOptions::empty() },
            compression: CompressionOptions::Snappy,
            version: Version::V1,
            data_page_size: None,
        };
        let file = std::fs::File::create(path).map_err(|e| IngestError::io(&name, e))?;
        let writer = FileWriter::try_new(std::io::BufWriter::new(file), schema.clone(), options).map_err(|e| IngestError::file(&name, e))?;
        let types = to_parquet_schema(&schema).map_err(|e| IngestError::file(&name, e))?.fields().to_vec();
        let encodings = schema.iter_values().map(|f| get_dtype_encoding(&f.dtype)).collect();
        Ok(OpenFile { name, writer, schema, types, encodings, options })
    }

    /// One row group: its columns encoded and compressed on every core (polars-parquet's own
    /// row-group iterator does them one after another, on the thread that writes; the last
    /// groups of a build's generated files were most of its serial time), then written in the
    /// schema's order, the same bytes either way.
    fn write(&mut self, arrays: Vec<Box<dyn Array>>) -> Result<()> {
        let fail = |e: polars_error::PolarsError| IngestError::file(&self.name, e);
        let n = arrays.first().map_or(0, |a| a.len());
        let batch = RecordBatchT::new(n, std::sync::Arc::new(self.schema.clone()), arrays);
        let (options, types, encodings) = (self.options, &self.types, &self.encodings);
        let made: Vec<Vec<Vec<CompressedPage>>> = batch
            .into_arrays()
            .into_par_iter()
            .enumerate()
            .map(|(i, array)| -> PolarsResult<Vec<Vec<CompressedPage>>> {
                array_to_columns(array, types[i].clone(), options, &encodings[i])?
                    .into_iter()
                    .map(|pages| pages.map(|page| Ok(compress(page?, Vec::new(), options.compression)?)).collect())
                    .collect()
            })
            .collect::<PolarsResult<_>>()
            .map_err(fail)?;
        let group = DynIter::new(made.into_iter().flatten().map(|pages| Ok(DynStreamingIterator::new(MadePages { pages: pages.into_iter(), current: None }))));
        self.writer.write(n as u64, group).map_err(fail)
    }

    fn end(mut self, layout: &Layout) -> Result<()> {
        let mut footer = vec![schema_to_metadata_key(&self.schema)];
        footer.extend(layout.metadata.iter().map(|(k, v)| KeyValue { key: k.clone(), value: Some(v.clone()) }));
        self.writer.end(Some(footer)).map_err(|e| IngestError::file(&self.name, e))?;
        use std::io::Write;
        self.writer.into_inner().flush().map_err(|e| IngestError::io(&self.name, e))
    }
}

/// A generated Parquet file written as its rows come, a row group whenever at least
/// `Layout::default().row_group_rows` are waiting (at a brand's end, so groups differ in size):
/// the generator then holds a few groups' rows (with a [`GroupWriter`]: the one filling, one
/// waiting and the one being written), not the file's (tens of millions at scale 10).
pub(super) struct GroupedFile {
    path: std::path::PathBuf,
    open: Option<OpenFile>,
}

impl GroupedFile {
    pub(super) fn new(path: std::path::PathBuf) -> GroupedFile {
        GroupedFile { path, open: None }
    }

    /// Writes `columns` as one row group (the first fixes the schema).
    pub(super) fn write(&mut self, columns: PolarsResult<Vec<Column>>) -> Result<()> {
        let columns = columns.map_err(|e| IngestError::file(self.path.display(), e))?;
        let (fields, arrays): (Vec<Field>, Vec<Box<dyn Array>>) = columns.into_iter().unzip();
        if self.open.is_none() {
            if let Some(parent) = self.path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| IngestError::io(parent.display(), e))?;
            }
            self.open = Some(OpenFile::create(&self.path, fields, &Layout::default())?);
        }
        self.open.as_mut().expect("opened above").write(arrays)
    }

    /// Ends a file at least one group opened.
    fn end(mut self) -> Result<()> {
        self.open.take().expect("a group was written").end(&Layout::default())
    }

    /// Ends the file; one that got no rows is written with the schema of `empty` and no group.
    pub(super) fn finish(mut self, empty: PolarsResult<Vec<Column>>) -> Result<()> {
        if self.open.is_none() {
            let columns = empty.map_err(|e| IngestError::file(self.path.display(), e))?;
            if let Some(parent) = self.path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| IngestError::io(parent.display(), e))?;
            }
            self.open = Some(OpenFile::create(&self.path, columns.into_iter().map(|c| c.0).collect(), &Layout::default())?);
        }
        self.open.take().expect("opened above").end(&Layout::default())
    }
}

/// Row groups still to be written that a [`GroupWriter`] holds at most beside the one it writes.
const GROUPS_QUEUED: usize = 1;

enum Group<C> {
    Rows(C),
    /// The last rows, made into a group when there are any: the file is ended after them.
    Last(C),
}

/// A [`GroupedFile`] written on a thread of its own: rows handed over as a group's worth of
/// columns (`C`) are made into Arrow arrays, encoded and written there, in the order handed over,
/// so the bytes are the ones the calling thread would write. On 16 cores a group's biggest column
/// took most of a second on one thread while the thread writing the sources in rank order waited,
/// and with it every core ("The build on 1 to 16 cores" in bench/RESULTS.md).
pub(super) struct GroupWriter<C: Send + 'static> {
    name: String,
    tx: Option<std::sync::mpsc::SyncSender<Group<C>>>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
    /// Set when the writer is dropped unfinished (the build failed elsewhere): groups still
    /// queued are not written.
    abandoned: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl<C: Send + 'static> GroupWriter<C> {
    /// `frame` makes a group's columns of its rows; `is_empty` says when the last rows make none.
    pub(super) fn spawn(path: std::path::PathBuf, frame: fn(C) -> PolarsResult<Vec<Column>>, is_empty: fn(&C) -> bool) -> Result<GroupWriter<C>> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Group<C>>(GROUPS_QUEUED);
        let name = path.display().to_string();
        let abandoned = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = abandoned.clone();
        let thread = std::thread::Builder::new()
            .name("parquet-writer".into())
            .spawn(move || -> Result<()> {
                let mut file = GroupedFile::new(path);
                // A closed channel without a last group, or an abandoned writer: the build failed
                // elsewhere; the file is left unfinished, as a failed build leaves its folder.
                while let Ok(group) = rx.recv() {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return Ok(());
                    }
                    match group {
                        Group::Rows(c) => file.write(frame(c))?,
                        Group::Last(c) => {
                            if is_empty(&c) {
                                return file.finish(frame(c));
                            }
                            file.write(frame(c))?;
                            // The empty frame only names the fields of a file no group opened.
                            return file.end();
                        }
                    }
                }
                Ok(())
            })
            .map_err(|e| IngestError::io(&name, e))?;
        Ok(GroupWriter { name, tx: Some(tx), thread: Some(thread), abandoned })
    }

    /// Hands a group's rows over; waits while [`GROUPS_QUEUED`] groups wait already. A writer
    /// that failed answers with its error.
    pub(super) fn write(&mut self, rows: C) -> Result<()> {
        match self.tx.as_ref().map(|tx| tx.send(Group::Rows(rows))) {
            Some(Ok(())) => Ok(()),
            _ => Err(self.join().err().unwrap_or_else(|| IngestError::Invalid(format!("{}: its writer stopped early", self.name)))),
        }
    }

    /// Hands the last rows over (a group of their own when there are any): the file is ended
    /// after them. [`GroupWriter::wait`] says how it went.
    pub(super) fn last(&mut self, rows: C) {
        if let Some(tx) = self.tx.take() {
            // A failed send means the writer stopped: `wait` names why.
            let _ = tx.send(Group::Last(rows));
        }
    }

    /// Waits for the file to be written to its end.
    pub(super) fn wait(mut self) -> Result<()> {
        self.join()
    }

    fn join(&mut self) -> Result<()> {
        self.tx = None;
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(done)) => done,
            Some(Err(_)) => Err(IngestError::Invalid(format!("{}: its writer panicked", self.name))),
            None => Err(IngestError::Invalid(format!("{}: its writer stopped early", self.name))),
        }
    }
}

impl<C: Send + 'static> Drop for GroupWriter<C> {
    /// A build that fails elsewhere drops its writers unfinished: the group being written is
    /// finished, no queued one is begun, and the thread has ended when `drop` returns.
    fn drop(&mut self) {
        self.abandoned.store(true, std::sync::atomic::Ordering::Relaxed);
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub(super) fn strs(name: &str, v: Vec<String>) -> Column {
    (Field::new(name.into(), ArrowDataType::Utf8View, true), Utf8ViewArray::from_slice_values(&v).boxed())
}
pub(super) fn opt_strs(name: &str, v: Vec<Option<String>>) -> Column {
    (Field::new(name.into(), ArrowDataType::Utf8View, true), Utf8ViewArray::from_slice(&v).boxed())
}
pub(super) fn numbers<T: NativeType>(name: &str, v: Vec<T>) -> Column {
    let a = PrimitiveArray::from_vec(v);
    (Field::new(name.into(), a.dtype().clone(), true), a.boxed())
}
pub(super) fn binaries(name: &str, v: &[Vec<u8>]) -> Column {
    (Field::new(name.into(), ArrowDataType::BinaryView, true), BinaryViewArray::from_slice_values(v).boxed())
}
/// A struct column of `fields`; a row is null where `valid` says so.
pub(super) fn structs(name: &str, fields: Vec<Column>, valid: Option<Vec<bool>>) -> Column {
    let len = fields.first().map_or(0, |f| f.1.len());
    let (fields, values): (Vec<Field>, Vec<Box<dyn Array>>) = fields.into_iter().unzip();
    let dtype = ArrowDataType::Struct(fields);
    let validity = valid.map(Bitmap::from_iter);
    (Field::new(name.into(), dtype.clone(), true), StructArray::new(dtype, len, values, validity).boxed())
}
/// Each row's value as a one-element list (every generated row has exactly one address,
/// one source record and one category label), or a null list where `valid` says so.
pub(super) fn singleton_lists((field, values): Column, valid: Option<Vec<bool>>) -> Column {
    let n = values.len();
    let lengths = (0..n).map(|i| valid.as_ref().map_or(1, |v| v[i] as usize));
    let offsets: OffsetsBuffer<i64> = Offsets::<i64>::try_from_lengths(lengths).expect("offsets fit in i64").into();
    let validity = valid.map(Bitmap::from_iter);
    // A null list holds no element: its value is dropped from the flattened values.
    let values = match &validity {
        Some(v) => {
            let keep: Vec<usize> = v.iter().enumerate().filter(|(_, b)| *b).map(|(i, _)| i).collect();
            take(values.as_ref(), &keep)
        }
        None => values,
    };
    let item = Field::new("item".into(), field.dtype.clone(), true);
    let dtype = ArrowDataType::LargeList(Box::new(item));
    (Field::new(field.name.clone(), dtype.clone(), true), ListArray::<i64>::new(dtype, offsets, values, validity).boxed())
}

/// The rows `keep` of a string array (the one shape `singleton_lists` drops rows of).
fn take(a: &dyn Array, keep: &[usize]) -> Box<dyn Array> {
    let s = a.as_any().downcast_ref::<Utf8ViewArray>().expect("lists of strings");
    Utf8ViewArray::from_slice(keep.iter().map(|&i| s.get(i)).collect::<Vec<_>>()).boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::parquet::{f64_col, list_first_str, list_strs, str_col, struct_str, ParquetFile};
    use polars_arrow::array::StaticArray;

    /// Seven rows in row groups of three, read back through the importers' reader: each group
    /// a frame starting at its file row, null structs and null lists read as missing values.
    #[test]
    fn written_row_groups_read_back_value_for_value() {
        let ids: Vec<String> = (0..7).map(|i| format!("id{i}")).collect();
        let names: Vec<Option<String>> = (0..7).map(|i| (i % 3 != 1).then(|| format!("name {i}"))).collect();
        let has_brand: Vec<bool> = (0..7).map(|i| i % 2 == 0).collect();
        let brands: Vec<Option<String>> = (0..7).map(|i| Some(format!("brand {i}"))).collect();
        let has_phone: Vec<bool> = (0..7).map(|i| i != 3).collect();
        let phones: Vec<Option<String>> = (0..7).map(|i| (i != 3).then(|| format!("+41 {i}"))).collect();
        let lat: Vec<f32> = (0..7).map(|i| i as f32 * 0.5).collect();
        let columns = vec![
            strs("id", ids.clone()),
            opt_strs("name", names.clone()),
            structs("brand", vec![opt_strs("name", brands.clone())], Some(has_brand.clone())),
            singleton_lists(opt_strs("phones", phones.clone()), Some(has_phone.clone())),
            numbers("lat", lat.clone()),
        ];
        let dir = crate::test_dir::TestDir::new("parquet");
        let path = dir.join("groups.parquet");
        write_columns(&path, columns, &Layout { row_group_rows: 3, ..Layout::default() }).unwrap();

        let file = ParquetFile::open(&path).unwrap();
        assert_eq!(file.row_groups(), 3);
        let mut seen = 0;
        for g in 0..3 {
            let frame = file.frame(g);
            assert_eq!(frame.first_row, seen);
            let (id, name, brand, phone) = (
                str_col(&frame, "id").unwrap(),
                str_col(&frame, "name").unwrap(),
                struct_str(&frame, "brand", "name").unwrap(),
                list_first_str(&frame, "phones", None).unwrap(),
            );
            let lat_read = f64_col(&frame, "lat").unwrap().unwrap();
            for i in 0..frame.height() {
                let row = seen + i;
                assert_eq!(id.get(i), Some(ids[row].as_str()));
                assert_eq!(name.get(i), names[row].as_deref());
                assert_eq!(brand.get(i), if has_brand[row] { brands[row].as_deref() } else { None }, "row {row}");
                assert_eq!(phone.get(i), if has_phone[row] { phones[row].as_deref() } else { None }, "row {row}");
                assert_eq!(lat_read.get(i), Some(lat[row] as f64));
            }
            assert!(str_col(&frame, "no such column").unwrap().get(0).is_none());
            seen += frame.height();
        }
        assert_eq!(seen, 7);
    }

    #[test]
    fn only_the_leaves_asked_for_are_decoded_and_they_read_as_the_whole_columns_do() {
        // Nested as Overture nests them: a struct with fields an import does not read, a
        // list of structs, some structs null (in a list too).
        let n = 9;
        let text = |what: &str| (0..n).map(|i| format!("{what} {i}")).collect::<Vec<String>>();
        let (primary, common, locality, country, record_id) = (text("primary"), text("common"), text("locality"), text("country"), text("record"));
        let named: Vec<bool> = (0..n).map(|i| i % 4 != 1).collect();
        let placed: Vec<bool> = (0..n).map(|i| i % 3 != 2).collect();
        let columns = vec![
            strs("id", text("id")),
            structs("names", vec![strs("primary", primary.clone()), strs("common", common.clone())], Some(named.clone())),
            singleton_lists(structs("addresses", vec![strs("locality", locality.clone()), strs("country", country.clone())], Some(placed.clone())), None),
            singleton_lists(structs("sources", vec![strs("property", text("property")), strs("record_id", record_id.clone())], None), None),
        ];
        let dir = crate::test_dir::TestDir::new("parquet-leaves");
        let path = dir.join("nested.parquet");
        write_columns(&path, columns, &Layout { row_group_rows: 4, ..Layout::default() }).unwrap();
        let file = ParquetFile::open(&path).unwrap();
        let mut row = 0;
        for g in 0..file.row_groups() {
            let frame = file.frame(g);
            frame.preload(&["id", "names.primary", "addresses.locality", "sources.record_id"]).unwrap();
            // Decoded: the leaves asked for, and no other.
            assert_eq!(frame.leaves_read("names").unwrap(), ["names.primary"]);
            assert_eq!(frame.leaves_read("addresses").unwrap(), ["addresses.locality"]);
            assert_eq!(frame.leaves_read("sources").unwrap(), ["sources.record_id"]);
            let (name, city, record) = (
                struct_str(&frame, "names", "primary").unwrap(),
                list_first_str(&frame, "addresses", Some("locality")).unwrap(),
                list_strs(&frame, "sources", "record_id").unwrap(),
            );
            // A path not asked for is read too, from the whole column.
            let (common_read, country_read) = (struct_str(&frame, "names", "common").unwrap(), list_first_str(&frame, "addresses", Some("country")).unwrap());
            for i in 0..frame.height() {
                let r = row + i;
                assert_eq!(name.get(i), named[r].then_some(primary[r].as_str()), "row {r}");
                assert_eq!(common_read.get(i), named[r].then_some(common[r].as_str()), "row {r}");
                assert_eq!(city.get(i), placed[r].then_some(locality[r].as_str()), "row {r}");
                assert_eq!(country_read.get(i), placed[r].then_some(country[r].as_str()), "row {r}");
                assert_eq!(record.row(i).collect::<Vec<_>>(), [Some(record_id[r].as_str())], "row {r}");
                assert_eq!(record.get(i, 1), None);
            }
            row += frame.height();
        }
        assert_eq!(row, n);
    }

    fn frame(v: Vec<i64>) -> PolarsResult<Vec<Column>> {
        Ok(vec![numbers("n", v)])
    }

    /// Groups handed to a writer thread make the file the calling thread makes with them, also
    /// with no rows at all; a writer that cannot write says why, to the next hand-over or at the end.
    #[test]
    fn a_writer_thread_writes_the_bytes_the_calling_thread_writes_and_names_its_failure() {
        let dir = crate::test_dir::TestDir::new("parquet-writer");
        let groups: Vec<Vec<i64>> = vec![(0..5).collect(), (5..7).collect(), vec![], (7..20).collect()];
        for last in [vec![20, 21], vec![]] {
            let (on_thread, here) = (dir.join("thread.parquet"), dir.join("here.parquet"));
            let mut writer = GroupWriter::spawn(on_thread.clone(), frame, Vec::is_empty).unwrap();
            let mut file = GroupedFile::new(here.clone());
            for g in &groups {
                writer.write(g.clone()).unwrap();
                file.write(frame(g.clone())).unwrap();
            }
            writer.last(last.clone());
            writer.wait().unwrap();
            if last.is_empty() {
                file.finish(frame(last)).unwrap();
            } else {
                file.write(frame(last)).unwrap();
                file.end().unwrap();
            }
            assert_eq!(std::fs::read(&on_thread).unwrap(), std::fs::read(&here).unwrap());
        }
        // No group at all: the file names its fields and holds no rows, as the calling thread's.
        let (on_thread, here) = (dir.join("empty-thread.parquet"), dir.join("empty-here.parquet"));
        let mut writer = GroupWriter::spawn(on_thread.clone(), frame, Vec::is_empty).unwrap();
        writer.last(Vec::new());
        writer.wait().unwrap();
        GroupedFile::new(here.clone()).finish(frame(Vec::new())).unwrap();
        assert_eq!(std::fs::read(&on_thread).unwrap(), std::fs::read(&here).unwrap());
        assert_eq!(ParquetFile::open(&on_thread).unwrap().row_groups(), 0);

        // Its folder is a file: the writer fails on the first group, and the failure comes back
        // (at a later hand-over or at the end) naming the folder, never as a silent success.
        let blocker = dir.join("not-a-folder");
        std::fs::write(&blocker, b"x").unwrap();
        let mut writer = GroupWriter::spawn(blocker.join("places.parquet"), frame, Vec::is_empty).unwrap();
        let handed: Vec<Result<()>> = (0..4).map(|i| writer.write(vec![i])).collect();
        let failed = handed.into_iter().find_map(|r| r.err());
        let failure = match failed {
            Some(e) => e,
            None => {
                writer.last(Vec::new());
                writer.wait().unwrap_err()
            }
        };
        assert!(failure.to_string().contains("not-a-folder"), "{failure}");
    }

    fn frame_or_panic(v: Vec<i64>) -> PolarsResult<Vec<Column>> {
        assert!(v != [666], "a column that cannot be made");
        frame(v)
    }

    /// A writer whose thread panics says so, naming its file.
    #[test]
    fn a_writer_thread_that_panics_is_named() {
        let dir = crate::test_dir::TestDir::new("parquet-panic");
        let mut writer = GroupWriter::spawn(dir.join("places.parquet"), frame_or_panic, Vec::is_empty).unwrap();
        let handed: Vec<Result<()>> = [vec![1], vec![666], vec![2], vec![3]].into_iter().map(|g| writer.write(g)).collect();
        let failure = match handed.into_iter().find_map(|r| r.err()) {
            Some(e) => e,
            None => {
                writer.last(Vec::new());
                writer.wait().unwrap_err()
            }
        };
        let message = failure.to_string();
        assert!(message.contains("panicked") && message.contains("places.parquet"), "{message}");
    }

    static GATED_CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static GATE: (std::sync::Mutex<bool>, std::sync::Condvar) = (std::sync::Mutex::new(false), std::sync::Condvar::new());

    /// Makes a group's columns once the test opens the gate.
    fn gated(v: Vec<i64>) -> PolarsResult<Vec<Column>> {
        GATED_CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut open = GATE.0.lock().unwrap();
        while !*open {
            open = GATE.1.wait(open).unwrap();
        }
        frame(v)
    }

    /// Waits (at most a minute, for a broken writer not to hang the suite) until `done` says so.
    fn until(done: impl Fn() -> bool) {
        let start = std::time::Instant::now();
        while !done() {
            assert!(start.elapsed() < std::time::Duration::from_secs(60), "waited a minute");
            std::thread::yield_now();
        }
    }

    /// A writer dropped unfinished (its build failed elsewhere) while it writes one group and
    /// holds another: the one being written is finished, the queued one never begun, and the
    /// thread has ended when the drop returns. The gate holds the first group until the drop
    /// has begun.
    #[test]
    fn a_writer_dropped_unfinished_begins_no_queued_group_and_ends_its_thread() {
        let dir = crate::test_dir::TestDir::new("parquet-drop");
        let mut writer = GroupWriter::spawn(dir.join("places.parquet"), gated, Vec::is_empty).unwrap();
        writer.write(vec![1, 2]).unwrap();
        until(|| GATED_CALLS.load(std::sync::atomic::Ordering::SeqCst) == 1);
        // The thread is inside the first group: the second waits in the channel.
        writer.write(vec![3, 4]).unwrap();
        let abandoned = writer.abandoned.clone();
        let opener = std::thread::spawn(move || {
            until(|| abandoned.load(std::sync::atomic::Ordering::SeqCst));
            *GATE.0.lock().unwrap() = true;
            GATE.1.notify_all();
        });
        drop(writer);
        // The thread was joined by the drop: nothing else can begin a group now.
        assert_eq!(GATED_CALLS.load(std::sync::atomic::Ordering::SeqCst), 1, "the queued group was begun");
        opener.join().unwrap();
    }

    /// A file of several row groups, each made on several cores in jobs of 4,096 rows: the
    /// rows come out in the file's order and every skip names its own row.
    #[test]
    fn rows_made_on_every_core_keep_the_file_order_and_their_row_numbers() {
        let n = 10_000usize;
        let ids: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        // Every 7th row has no name (skipped, counted); every 997th a latitude out of range
        // (skipped with a message naming its row, counted from 1).
        let names: Vec<Option<String>> = (0..n).map(|i| (i % 7 != 3).then(|| format!("Store {i}"))).collect();
        let lat: Vec<f64> = (0..n).map(|i| if i % 997 == 500 { 95.0 } else { 40.0 + i as f64 * 1e-4 }).collect();
        let lng: Vec<f64> = (0..n).map(|i| -105.0 + i as f64 * 1e-4).collect();
        let columns = vec![strs("fsq_place_id", ids), opt_strs("name", names), numbers("latitude", lat), numbers("longitude", lng)];
        let dir = crate::test_dir::TestDir::new("parquet-order");
        let path = dir.join("places.parquet");
        write_columns(&path, columns, &Layout { row_group_rows: 4_500, ..Layout::default() }).unwrap();
        assert_eq!(ParquetFile::open(&path).unwrap().row_groups(), 3);

        let (rows, report) = crate::import::import_fsq(&path).unwrap();
        let bad = |i: usize| i % 997 == 500;
        let kept: Vec<String> = (0..n).filter(|&i| i % 7 != 3 && !bad(i)).map(|i| format!("p{i}")).collect();
        assert_eq!(rows.iter().map(|r| r.source_id.clone()).collect::<Vec<_>>(), kept);
        assert_eq!(report.rows_read, n as u64);
        let named: Vec<String> = (0..n).filter(|&i| bad(i)).map(|i| format!("{}: row {}: coordinates out of range", path.display(), i + 1)).collect();
        assert_eq!(report.errors.len(), named.len());
        for (e, want) in report.errors.iter().zip(&named) {
            assert!(e.starts_with(want), "{e} is not {want}");
        }
    }
}
