//! Column access over a Parquet file read with polars-parquet's Arrow reader (no DataFrame:
//! polars-core and its query engine were most of a cold build, for a table we only read
//! column by column). A file is read one row group at a time, each column only when an
//! importer asks for it; plain, struct-field and list columns are read whole (lists through
//! their offsets and flattened values, not an array per row). A column the file lacks reads as
//! all-null, since publishers add and drop columns between releases.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::Cursor;
use std::os::unix::fs::FileExt;
use std::path::Path;

use polars_arrow::array::{Array, BinaryViewArray, DictionaryArray, ListArray, PrimitiveArray, StructArray, Utf8ViewArray};
use polars_arrow::bitmap::Bitmap;
use polars_arrow::datatypes::{ArrowDataType, ArrowSchema, Field, TimeUnit};
use polars_buffer::Buffer;
use polars_error::{polars_bail, PolarsResult};
use polars_parquet::read::{column_iter_to_arrays, infer_schema, read_metadata, BasicDecompressor, FileMetadata, PageReader};

use super::Batcher;
use crate::error::{IngestError, Result};
use crate::source_row::Skipped;
use crate::{ImportReport, SourceRow};

/// A row group's columns as an importer reads them, decoded once: each row is then made on
/// its own, on any thread.
pub trait Rows: Sync {
    /// Row `i` of the group, or why it is skipped.
    fn row(&self, i: usize) -> std::result::Result<SourceRow, Skipped>;
}

/// Rows of a row group made by one job: enough to be worth a core (about a millisecond), few
/// enough that every core gets some of a group (a group holds up to hundreds of thousands) and
/// that the jobs out at once, a few per thread, hold a small part of the group's rows.
const JOB_ROWS: usize = 1_024;

/// Jobs of a row group out at once, per core.
const JOBS_AHEAD_PER_CORE: usize = 2;

/// An importer's refusal of a file's columns as the importer wrote it: polars prefixes a missing
/// column's message with "not found:", which read as if the file were missing.
fn schema_message(e: polars_error::PolarsError) -> String {
    match e {
        polars_error::PolarsError::ColumnNotFound(m) => m.to_string(),
        other => other.to_string(),
    }
}

/// The file loop both Parquet importers share: every `.parquet` file of a file or a folder
/// tree, read one at a time and one row group at a time. `columns` decodes a group's columns
/// (on every core, a column to a core), its rows are made on every core, [`JOB_ROWS`] at a
/// time, and they go to `sink` in the file's order, in batches of [`super::BATCH_ROWS`] (a
/// release is hundreds of parts of millions of rows, a row group up to hundreds of thousands);
/// a file that fails names itself.
pub fn import_files(
    path: &Path,
    source: storemap_core::SourceType,
    columns: for<'f> fn(&Frame<'f>) -> PolarsResult<Box<dyn Rows>>,
    sink: &mut dyn FnMut(Vec<SourceRow>),
) -> Result<ImportReport> {
    let mut report = ImportReport::new(source);
    let mut batches = Batcher::new(sink);
    for file in super::input_files(path, &[".parquet"])? {
        let name = file.display().to_string();
        report.files += 1;
        if std::fs::metadata(&file).map_err(|e| IngestError::io(&name, e))?.len() == 0 {
            // No Parquet file is empty (it ends with its footer): this is a part whose download
            // failed, and importing the rest would read its stores as closed.
            return Err(IngestError::file(&name, "0 bytes: not a Parquet file; a download cut short? Fetch it again"));
        }
        let reader = ParquetFile::open(&file)?;
        for group in 0..reader.row_groups() {
            let frame = reader.frame(group);
            let rows = columns(&frame).map_err(|e| IngestError::file(&name, schema_message(e)))?;
            let (n, first_row) = (frame.height(), frame.first_row);
            drop(frame);
            let rows = rows.as_ref();
            let take = |made: Vec<(usize, std::result::Result<SourceRow, Skipped>)>| {
                for (i, row) in made {
                    report.rows_read += 1;
                    match row {
                        Ok(r) => batches.push(r),
                        Err(skipped) => report.skip(&name, (first_row + i) as u64 + 1, skipped),
                    }
                }
            };
            crate::parallel::in_order(
                JOBS_AHEAD_PER_CORE,
                |r: std::ops::Range<usize>| r.map(|i| (i, rows.row(i))).collect(),
                take,
                |submit| (0..n).step_by(JOB_ROWS).for_each(|start| submit(start..(start + JOB_ROWS).min(n))),
            );
            batches.flush();
        }
    }
    report.rows_kept += batches.handed;
    Ok(report)
}

/// An open Parquet file: its footer and its Arrow schema.
pub struct ParquetFile {
    name: String,
    /// Read at given offsets (`read_exact_at`), so columns are read on several threads at once.
    file: File,
    metadata: FileMetadata,
    schema: ArrowSchema,
}

impl ParquetFile {
    pub fn open(path: &Path) -> Result<ParquetFile> {
        let name = path.display().to_string();
        let mut file = File::open(path).map_err(|e| IngestError::io(&name, e))?;
        // A truncated or non-Parquet file is an error for the whole file, named.
        let unreadable = |e: &dyn std::fmt::Display| IngestError::file(&name, format!("not a readable Parquet file: {e}"));
        let metadata = read_metadata(&mut file).map_err(|e| unreadable(&e))?;
        let schema = infer_schema(&metadata).map_err(|e| unreadable(&e))?;
        Ok(ParquetFile { name, file, metadata, schema })
    }

    pub fn row_groups(&self) -> usize {
        self.metadata.row_groups.len()
    }

    /// Row group `group`, its columns read when asked for.
    pub fn frame(&self, group: usize) -> Frame<'_> {
        let first_row = self.metadata.row_groups[..group].iter().map(|g| g.num_rows()).sum();
        Frame { file: self, group, first_row, columns: RefCell::new(HashMap::new()) }
    }

    /// Every row group as one array per column (for files small enough to hold: the samples
    /// a test or benchmark spreads).
    pub fn read_all(&self) -> Result<Vec<(Field, Box<dyn Array>)>> {
        let fail = |e: polars_error::PolarsError| IngestError::file(&self.name, e);
        let mut out = Vec::new();
        for field in self.schema.iter_values() {
            let mut parts = Vec::new();
            for group in 0..self.row_groups() {
                match self.read_column(group, field).map_err(fail)? {
                    Some(a) => parts.push(a),
                    None => parts.push(polars_arrow::array::new_null_array(field.dtype.clone(), self.metadata.row_groups[group].num_rows())),
                }
            }
            let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            let all = if refs.len() == 1 { parts.pop().expect("one part") } else { polars_arrow::compute::concatenate::concatenate(&refs).map_err(fail)? };
            out.push((field.clone(), all));
        }
        Ok(out)
    }

    /// One top-level column of one row group (its leaf columns' chunks read from the file),
    /// or `None` when the row group has no chunk for it.
    fn read_column(&self, group: usize, field: &Field) -> PolarsResult<Option<Box<dyn Array>>> {
        self.read_leaves(group, field, &[])
    }

    /// [`ParquetFile::read_column`], only the leaves under the paths `keep` (`names.primary`,
    /// `addresses.locality`: struct fields joined by dots, lists left out; all of them where
    /// `keep` is empty or names the column itself). The struct and list levels above a leaf
    /// come with it (their nulls are in every leaf), so the array reads as the whole column's
    /// does for those paths. Releases nest dozens of leaves an import never reads (Overture's
    /// names in every language, its sources' properties); decoding only the ones read saves
    /// their time and the memory they would hold while the group's rows are made.
    fn read_leaves(&self, group: usize, field: &Field, keep: &[String]) -> PolarsResult<Option<Box<dyn Array>>> {
        let rg = &self.metadata.row_groups[group];
        let Some(chunks) = rg.columns_under_root_iter(&field.name) else { return Ok(None) };
        let chunks: Vec<_> = chunks.collect();
        let kept = |path: &str| keep.is_empty() || keep.iter().any(|k| covers(k, path));
        let all = leaf_paths(&field.dtype, &field.name);
        // The leaves in the file's order, as the decoder takes them; where they do not line up
        // with the chunks (a type this does not know), the whole column is read.
        let (field, chunks) = match prune(&field.dtype, &field.name, &kept) {
            Some(dtype) if all.len() == chunks.len() => {
                let mut wanted = leaf_paths(&dtype, &field.name).into_iter().peekable();
                let chunks = all.iter().zip(chunks).filter(|(path, _)| wanted.next_if(|w| w == *path).is_some()).map(|(_, c)| c).collect();
                (Field { dtype, ..field.clone() }, chunks)
            }
            _ => (field.clone(), chunks),
        };
        let mut decompressors = Vec::new();
        let mut types = Vec::new();
        for meta in chunks {
            let range = meta.byte_range();
            let mut bytes = vec![0u8; (range.end - range.start) as usize];
            self.file.read_exact_at(&mut bytes, range.start)?;
            let pages = PageReader::new(Cursor::new(Buffer::from(bytes)), meta, vec![], usize::MAX);
            decompressors.push(BasicDecompressor::new(pages, vec![]));
            types.push(&meta.descriptor().descriptor.primitive_type);
        }
        let (mut arrays, _) = column_iter_to_arrays(decompressors, types, field, None)?;
        Ok(Some(match arrays.len() {
            1 => arrays.pop().expect("one array"),
            _ => polars_arrow::compute::concatenate::concatenate(&arrays.iter().map(|a| a.as_ref()).collect::<Vec<_>>())?,
        }))
    }
}

/// Whether asking for `asked` takes the leaf at `path`: the path itself, or one below it.
fn covers(asked: &str, path: &str) -> bool {
    path == asked || path.strip_prefix(asked).is_some_and(|rest| rest.starts_with('.'))
}

/// The column's leaves, in the file's order, by path (struct fields joined by dots, list
/// levels left out, a map's keys and values as `.key` and `.value` under it).
pub(crate) fn leaf_paths(dtype: &ArrowDataType, path: &str) -> Vec<String> {
    fn walk(dtype: &ArrowDataType, path: &str, out: &mut Vec<String>) {
        match dtype {
            ArrowDataType::Extension(ext) => walk(&ext.inner, path, out),
            ArrowDataType::Struct(fields) => fields.iter().for_each(|f| walk(&f.dtype, &format!("{path}.{}", f.name), out)),
            ArrowDataType::List(inner) | ArrowDataType::LargeList(inner) | ArrowDataType::FixedSizeList(inner, _) | ArrowDataType::Map(inner, _) => {
                walk(&inner.dtype, path, out)
            }
            _ => out.push(path.to_string()),
        }
    }
    let mut out = Vec::new();
    walk(dtype, path, &mut out);
    out
}

/// The type with only the leaves `kept` takes (see [`leaf_paths`]), or `None` where it takes
/// none. A map or an extension type is kept whole if any of its leaves is taken.
fn prune(dtype: &ArrowDataType, path: &str, kept: &dyn Fn(&str) -> bool) -> Option<ArrowDataType> {
    let inner = |f: &Field| prune(&f.dtype, path, kept).map(|dtype| Box::new(Field { dtype, ..f.clone() }));
    match dtype {
        ArrowDataType::Struct(fields) => {
            let fields: Vec<Field> =
                fields.iter().filter_map(|f| prune(&f.dtype, &format!("{path}.{}", f.name), kept).map(|dtype| Field { dtype, ..f.clone() })).collect();
            (!fields.is_empty()).then_some(ArrowDataType::Struct(fields))
        }
        ArrowDataType::List(f) => inner(f).map(ArrowDataType::List),
        ArrowDataType::LargeList(f) => inner(f).map(ArrowDataType::LargeList),
        ArrowDataType::FixedSizeList(f, n) => inner(f).map(|f| ArrowDataType::FixedSizeList(f, *n)),
        ArrowDataType::Map(..) | ArrowDataType::Extension(_) => leaf_paths(dtype, path).iter().any(|p| kept(p)).then(|| dtype.clone()),
        _ => kept(path).then(|| dtype.clone()),
    }
}

/// One row group: its rows start at `first_row` of the file (for the line numbers skipped
/// rows are reported at).
pub struct Frame<'a> {
    file: &'a ParquetFile,
    group: usize,
    pub first_row: usize,
    /// Top-level columns read, by name.
    columns: RefCell<HashMap<String, Read>>,
}

/// A top-level column as read: the paths under it that were asked for (none: all of it), and
/// the array (`None` where the row group has no chunk for it).
type Read = (Vec<String>, Option<Box<dyn Array>>);

impl Frame<'_> {
    pub fn height(&self) -> usize {
        self.file.metadata.row_groups[self.group].num_rows()
    }

    pub fn names(&self) -> Vec<String> {
        self.file.schema.iter_names().map(|n| n.to_string()).collect()
    }

    /// The column's declared type (storage type for an extension), if the file has it.
    pub fn dtype(&self, name: &str) -> Option<&ArrowDataType> {
        self.file.schema.get(name).map(|f| f.dtype.to_storage())
    }

    /// Decodes the columns under `paths` the file has (a top-level column, or a path below
    /// one: `names.primary`), each top-level column on a core of its own, for the accessors
    /// below to find: a row group's columns are most of what reading it costs. Only the leaves
    /// under `paths` are decoded; an accessor asking for another path of such a column has
    /// the whole column read for it.
    pub fn preload(&self, paths: &[&str]) -> PolarsResult<()> {
        let mut roots: Vec<(&Field, Vec<String>)> = Vec::new();
        for p in paths {
            let root = p.split('.').next().unwrap_or(p);
            let Some(field) = self.file.schema.get(root).filter(|f| f.dtype.to_storage() != &ArrowDataType::Null) else { continue };
            if self.columns.borrow().contains_key(root) {
                continue;
            }
            let asked = if *p == root { None } else { Some(p.to_string()) };
            match roots.iter_mut().find(|(f, _)| f.name == root) {
                // The whole column once anything asks for all of it.
                Some((_, keep)) => match asked {
                    Some(a) if !keep.is_empty() => keep.push(a),
                    _ => keep.clear(),
                },
                None => roots.push((field, asked.into_iter().collect())),
            }
        }
        let (file, group) = (self.file, self.group);
        let read = crate::parallel::parallel_map_from(2, &roots, |(f, keep)| file.read_leaves(group, f, keep));
        let mut columns = self.columns.borrow_mut();
        for ((f, keep), a) in roots.into_iter().zip(read) {
            columns.insert(f.name.to_string(), (keep, a?));
        }
        Ok(())
    }

    /// The leaves decoded so far of top-level column `name`, by path.
    #[cfg(test)]
    pub(crate) fn leaves_read(&self, name: &str) -> Option<Vec<String>> {
        let columns = self.columns.borrow();
        let (_, array) = columns.get(name)?;
        array.as_ref().map(|a| leaf_paths(a.dtype(), name))
    }

    /// The top-level column `path` is under, with at least that path in it, where the file has
    /// the column with a value type (Arrow writers emit `null`-typed columns for fields no row
    /// of a file has).
    fn column(&self, path: &str) -> PolarsResult<Option<Box<dyn Array>>> {
        let name = path.split('.').next().unwrap_or(path);
        if let Some((keep, c)) = self.columns.borrow().get(name) {
            if keep.is_empty() || keep.iter().any(|k| covers(k, path)) {
                return Ok(c.clone());
            }
        }
        let array = match self.file.schema.get(name) {
            Some(field) if field.dtype.to_storage() != &ArrowDataType::Null => self.file.read_column(self.group, field)?,
            _ => None,
        };
        self.columns.borrow_mut().insert(name.to_string(), (Vec::new(), array.clone()));
        Ok(array)
    }
}

/// The names of `required` columns the file lacks; one it has with no values in it (Arrow's
/// null type, what a re-write makes of an all-NULL column) counts as lacking, and is named so
/// ("latitude (every value null)"), since the file does show it.
pub fn missing_columns(df: &Frame, required: &[&str]) -> Vec<String> {
    required
        .iter()
        .filter_map(|c| match df.dtype(c) {
            None => Some(c.to_string()),
            Some(t) if t.to_storage() == &ArrowDataType::Null => Some(format!("{c} (every value null)")),
            Some(_) => None,
        })
        .collect()
}

/// A string column, or a column the file does not have.
pub enum Col {
    Str(Utf8ViewArray),
    Owned(Vec<Option<String>>),
    /// Each row's first element of a list column, read in place (copied out as strings, a row
    /// group's lists took about 0.75 KB a row: most of what an Overture group held beside its
    /// rows).
    First(Box<Lists>),
    Missing,
}

impl Col {
    /// Any array as strings: strings as they are, dictionaries by their values, numbers in
    /// decimal, dates and timestamps in ISO 8601 (Foursquare's schema types its dates as
    /// Parquet DATE).
    fn from_array(a: &dyn Array) -> PolarsResult<Col> {
        let any = a.as_any();
        if let Some(s) = any.downcast_ref::<Utf8ViewArray>() {
            return Ok(Col::Str(s.clone()));
        }
        if let Some(b) = any.downcast_ref::<BinaryViewArray>() {
            return Ok(Col::Str(b.to_utf8view()?));
        }
        let owned = |f: &dyn Fn(usize) -> String| Col::Owned((0..a.len()).map(|i| a.is_valid(i).then(|| f(i))).collect());
        match a.dtype().to_storage() {
            ArrowDataType::Date32 => {
                let days = any.downcast_ref::<PrimitiveArray<i32>>().expect("Date32 is i32");
                Ok(owned(&|i| storemap_core::format_iso(days.value(i) as i64 * storemap_core::DAY_S)[..10].to_string()))
            }
            // Categorical text (pyarrow writes a pandas category, or any column it was asked to
            // keep as dictionary, with its Arrow type in the footer): polars' cast has no way
            // from a dictionary to text, and panicked.
            ArrowDataType::Dictionary(key, _, _) => polars_arrow::match_integer_type!(key, |$T| {
                let d = any.downcast_ref::<DictionaryArray<$T>>().expect("the dtype says dictionary");
                let values = Col::from_array(d.values().as_ref())?;
                Ok(Col::Owned(d.keys_iter().map(|k| k.and_then(|k| values.get(k)).map(str::to_string)).collect()))
            }),
            ArrowDataType::Timestamp(unit, _) => {
                let per_s = match unit {
                    TimeUnit::Second => 1,
                    TimeUnit::Millisecond => 1_000,
                    TimeUnit::Microsecond => 1_000_000,
                    TimeUnit::Nanosecond => 1_000_000_000,
                };
                let t = any.downcast_ref::<PrimitiveArray<i64>>().expect("Timestamp is i64");
                Ok(owned(&|i| storemap_core::format_iso(t.value(i).div_euclid(per_s))))
            }
            _ => {
                let cast = polars_compute::cast::cast(a, &ArrowDataType::Utf8View, Default::default())?;
                match cast.as_any().downcast_ref::<Utf8ViewArray>() {
                    Some(s) => Ok(Col::Str(s.clone())),
                    None => polars_bail!(SchemaMismatch: "a {:?} column cannot be read as text", a.dtype()),
                }
            }
        }
    }

    pub fn get(&self, i: usize) -> Option<&str> {
        match self {
            Col::Str(a) => a.get(i),
            Col::Owned(v) => v[i].as_deref(),
            Col::First(lists) => lists.get(i, 0),
            Col::Missing => None,
        }
    }
}

pub fn str_col(df: &Frame, name: &str) -> PolarsResult<Col> {
    match df.column(name)? {
        Some(a) => Col::from_array(a.as_ref()),
        None => Ok(Col::Missing),
    }
}

/// The first of several columns the file has (publishers rename columns between releases).
pub fn str_col_any(df: &Frame, names: &[&str]) -> PolarsResult<Col> {
    for n in names {
        if let Some(a) = df.column(n)? {
            return Col::from_array(a.as_ref());
        }
    }
    Ok(Col::Missing)
}

/// A numeric column as doubles: floats and integers by polars' cast, decimals (Foursquare's
/// schema documents its coordinates as DECIMAL) by their scale, a dictionary (a pandas
/// category) through its values. A column no number can be read from is refused naming it and
/// its type.
pub fn f64_col(df: &Frame, name: &str) -> PolarsResult<Option<PrimitiveArray<f64>>> {
    let Some(a) = df.column(name)? else { return Ok(None) };
    f64_array(a.as_ref(), name).map(Some)
}

fn f64_array(a: &dyn Array, name: &str) -> PolarsResult<PrimitiveArray<f64>> {
    let any = a.as_any();
    match a.dtype().to_storage() {
        ArrowDataType::Float64 => Ok(any.downcast_ref::<PrimitiveArray<f64>>().expect("the dtype says f64").clone()),
        ArrowDataType::Decimal(_, scale) | ArrowDataType::Decimal32(_, scale) | ArrowDataType::Decimal64(_, scale) => {
            let per = 10f64.powi(*scale as i32);
            let (values, validity): (Vec<f64>, _) = if let Some(d) = any.downcast_ref::<PrimitiveArray<i128>>() {
                (d.values_iter().map(|v| *v as f64 / per).collect(), d.validity())
            } else if let Some(d) = any.downcast_ref::<PrimitiveArray<i64>>() {
                (d.values_iter().map(|v| *v as f64 / per).collect(), d.validity())
            } else if let Some(d) = any.downcast_ref::<PrimitiveArray<i32>>() {
                (d.values_iter().map(|v| *v as f64 / per).collect(), d.validity())
            } else {
                polars_bail!(SchemaMismatch: "column {name}: a {:?} column cannot be read as numbers", a.dtype())
            };
            Ok(PrimitiveArray::<f64>::from_vec(values).with_validity(validity.cloned()))
        }
        // polars' cast has no way from a dictionary to numbers either (it panicked).
        ArrowDataType::Dictionary(key, _, _) => polars_arrow::match_integer_type!(key, |$T| {
            let d = any.downcast_ref::<DictionaryArray<$T>>().expect("the dtype says dictionary");
            let values = f64_array(d.values().as_ref(), name)?;
            let at = |k: usize| (k < values.len() && values.is_valid(k)).then(|| values.value(k));
            Ok(d.keys_iter().map(|k| k.and_then(at)).collect::<PrimitiveArray<f64>>())
        }),
        t => match polars_compute::cast::cast(a, &ArrowDataType::Float64, Default::default()) {
            Ok(cast) => Ok(cast.as_any().downcast_ref::<PrimitiveArray<f64>>().expect("cast to f64").clone()),
            Err(e) => polars_bail!(SchemaMismatch: "column {name}: a {t:?} column cannot be read as numbers ({e})"),
        },
    }
}

/// A binary column (WKB geometry), whether the file tags it as `geoarrow.wkb` or not.
pub fn binary_col(df: &Frame, name: &str) -> PolarsResult<Option<BinaryViewArray>> {
    let Some(a) = df.column(name)? else { return Ok(None) };
    match a.as_any().downcast_ref::<BinaryViewArray>() {
        Some(b) => Ok(Some(b.clone())),
        None => polars_bail!(SchemaMismatch: "{name} is a {:?}, not binary", a.dtype()),
    }
}

/// `field` of a struct array, null wherever the struct itself is null.
fn struct_field(a: &dyn Array, field: &str) -> Option<Box<dyn Array>> {
    let s = a.as_any().downcast_ref::<StructArray>()?;
    let k = s.fields().iter().position(|f| f.name.as_str() == field)?;
    let values = s.values()[k].clone();
    if values.dtype().to_storage() == &ArrowDataType::Null {
        return None;
    }
    Some(match (s.validity(), values.validity()) {
        (Some(outer), Some(inner)) => values.with_validity(Some(outer & inner)),
        (Some(outer), None) => values.with_validity(Some(outer.clone())),
        _ => values,
    })
}

/// `column.field` of a struct column.
pub fn struct_str(df: &Frame, name: &str, field: &str) -> PolarsResult<Col> {
    match df.column(&format!("{name}.{field}"))?.and_then(|s| struct_field(s.as_ref(), field)) {
        Some(f) => Col::from_array(f.as_ref()),
        None => Ok(Col::Missing),
    }
}

/// `column.field.subfield` of a struct column (Overture's `brand.names.primary`).
pub fn struct_str2(df: &Frame, name: &str, field: &str, sub: &str) -> PolarsResult<Col> {
    match df.column(&format!("{name}.{field}.{sub}"))?.and_then(|s| struct_field(s.as_ref(), field)).and_then(|f| struct_field(f.as_ref(), sub)) {
        Some(g) => Col::from_array(g.as_ref()),
        None => Ok(Col::Missing),
    }
}

/// For each row, the first element of a list column (of strings, or of structs when `field`
/// names the struct field to take).
pub fn list_first_str(df: &Frame, column: &str, field: Option<&str>) -> PolarsResult<Col> {
    let Some((ranges, values)) = list_parts(df, column, field)? else {
        return Ok(Col::Missing);
    };
    Ok(Col::First(Box::new(Lists { ranges, values })))
}

/// Every row's elements of one field of a list-of-structs column, read in place.
pub struct Lists {
    /// Each row's range in `values`.
    ranges: Vec<std::ops::Range<usize>>,
    values: Col,
}

impl Lists {
    /// Row `i`'s elements, each `None` where it is null.
    pub fn row(&self, i: usize) -> impl Iterator<Item = Option<&str>> + '_ {
        self.ranges[i].clone().map(|k| self.values.get(k))
    }

    /// Element `k` of row `i`: `None` where it is null or the row has fewer.
    pub fn get(&self, i: usize, k: usize) -> Option<&str> {
        let r = &self.ranges[i];
        if r.start + k < r.end {
            self.values.get(r.start + k)
        } else {
            None
        }
    }
}

/// For each row, every element's `field` of a list-of-structs column (none for every row where
/// the file lacks it).
pub fn list_strs(df: &Frame, column: &str, field: &str) -> PolarsResult<Lists> {
    Ok(match list_parts(df, column, Some(field))? {
        Some((ranges, values)) => Lists { ranges, values },
        None => Lists { ranges: vec![0..0; df.height()], values: Col::Missing },
    })
}

/// Each row's range of the list's flattened values (a null list as an empty one), and those
/// values as strings.
fn list_parts(df: &Frame, name: &str, field: Option<&str>) -> PolarsResult<Option<(Vec<std::ops::Range<usize>>, Col)>> {
    let path = field.map_or_else(|| name.to_string(), |f| format!("{name}.{f}"));
    let Some(a) = df.column(&path)? else { return Ok(None) };
    let (offsets, validity, inner): (Vec<usize>, Option<&Bitmap>, Box<dyn Array>) = if let Some(l) = a.as_any().downcast_ref::<ListArray<i64>>() {
        (l.offsets().as_slice().iter().map(|&o| o as usize).collect(), l.validity(), l.values().clone())
    } else if let Some(l) = a.as_any().downcast_ref::<ListArray<i32>>() {
        (l.offsets().as_slice().iter().map(|&o| o as usize).collect(), l.validity(), l.values().clone())
    } else {
        return Ok(None);
    };
    let ranges = offsets.windows(2).enumerate().map(|(i, w)| if validity.is_none_or(|v| v.get_bit(i)) { w[0]..w[1] } else { 0..0 }).collect();
    let values = match field {
        Some(f) => match struct_field(inner.as_ref(), f) {
            Some(v) => v,
            None => return Ok(None),
        },
        None if inner.dtype().to_storage() == &ArrowDataType::Null => return Ok(None),
        None => inner,
    };
    Ok(Some((ranges, Col::from_array(values.as_ref())?)))
}
