//! Mapbox Vector Tile 2.1 decoding: layers, features, their tags and geometries in tile
//! coordinates (0..extent; a feature may reach past the edge into the buffer). The format is a
//! few protobuf messages, decoded here with a hand-written reader of the wire format rather than
//! a generated one, so that a damaged tile is an error for that tile and nothing more: every
//! length is checked, and geometry commands that run past their data end the feature.

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
#[error("vector tile: {0}")]
pub struct MvtError(pub String);

type Result<T> = std::result::Result<T, MvtError>;

fn bad<T>(m: &str) -> Result<T> {
    Err(MvtError(m.into()))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeomType {
    Unknown,
    Point,
    LineString,
    Polygon,
}

/// A tag value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    String(String),
    Float(f32),
    Double(f64),
    Int(i64),
    Uint(u64),
    Bool(bool),
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(f) => Some(f64::from(f)),
            Value::Double(f) => Some(f),
            Value::Int(i) => Some(i as f64),
            Value::Uint(u) => Some(u as f64),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Feature {
    pub id: Option<u64>,
    pub kind: GeomType,
    /// (key index, value index) pairs into the layer's `keys` and `values`.
    pub tags: Vec<(u32, u32)>,
    /// Points: one part per point; lines: one part per line; polygons: one ring per part
    /// (exterior rings wind clockwise in tile coordinates, holes counter-clockwise).
    pub parts: Vec<Vec<(i32, i32)>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    pub name: String,
    pub extent: u32,
    pub keys: Vec<String>,
    pub values: Vec<Value>,
    pub features: Vec<Feature>,
}

impl Layer {
    /// Feature `f`'s value for `key`.
    pub fn tag<'a>(&'a self, f: &Feature, key: &str) -> Option<&'a Value> {
        f.tags.iter().find(|(k, _)| self.keys.get(*k as usize).is_some_and(|s| s == key)).and_then(|(_, v)| self.values.get(*v as usize))
    }
}

/// The protobuf wire format: varints, and length-delimited fields.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, pos: 0 }
    }

    fn done(&self) -> bool {
        self.pos >= self.b.len()
    }

    fn varint(&mut self) -> Result<u64> {
        super::varint(self.b, &mut self.pos).ok_or_else(|| MvtError("a number runs past the end or past 64 bits".into()))
    }

    fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.varint()?;
        let end = self.pos.checked_add(usize::try_from(n).unwrap_or(usize::MAX)).filter(|&e| e <= self.b.len());
        let Some(end) = end else { return bad("a field runs past the end") };
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn fixed(&mut self, n: usize) -> Result<&'a [u8]> {
        let Some(s) = self.b.get(self.pos..self.pos + n) else { return bad("a fixed-size field runs past the end") };
        self.pos += n;
        Ok(s)
    }

    /// The next field's number and wire type.
    fn key(&mut self) -> Result<(u64, u8)> {
        let k = self.varint()?;
        Ok((k >> 3, (k & 7) as u8))
    }

    fn skip(&mut self, wire: u8) -> Result<()> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => self.fixed(8).map(|_| ()),
            2 => self.bytes().map(|_| ()),
            5 => self.fixed(4).map(|_| ()),
            _ => bad("an unknown wire type"),
        }
    }

    fn packed(&mut self) -> Result<Vec<u32>> {
        let mut r = Reader::new(self.bytes()?);
        let mut out = Vec::new();
        while !r.done() {
            out.push(u32::try_from(r.varint()?).map_err(|_| MvtError("a packed value over 32 bits".into()))?);
        }
        Ok(out)
    }
}

fn zigzag(v: u32) -> i32 {
    ((v >> 1) as i32) ^ -((v & 1) as i32)
}

/// A feature's geometry commands as parts of absolute tile coordinates.
pub fn decode_geometry(kind: GeomType, cmds: &[u32]) -> Result<Vec<Vec<(i32, i32)>>> {
    let (mut x, mut y) = (0i32, 0i32);
    let mut parts: Vec<Vec<(i32, i32)>> = Vec::new();
    let mut i = 0;
    while i < cmds.len() {
        let (id, count) = (cmds[i] & 7, (cmds[i] >> 3) as usize);
        i += 1;
        match id {
            1 | 2 => {
                if count > (cmds.len() - i) / 2 {
                    return bad("a geometry command runs past its data");
                }
                for _ in 0..count {
                    x = x.wrapping_add(zigzag(cmds[i]));
                    y = y.wrapping_add(zigzag(cmds[i + 1]));
                    i += 2;
                    if id == 1 {
                        parts.push(vec![(x, y)]);
                    } else {
                        let Some(p) = parts.last_mut() else { return bad("LineTo before MoveTo") };
                        p.push((x, y));
                    }
                }
            }
            7 => {
                // ClosePath: a polygon ring returns to its start.
                if kind == GeomType::Polygon {
                    if let Some(p) = parts.last_mut() {
                        if let Some(&first) = p.first() {
                            p.push(first);
                        }
                    }
                }
            }
            _ => return bad("an unknown geometry command"),
        }
    }
    Ok(parts)
}

fn decode_value(b: &[u8]) -> Result<Value> {
    let mut r = Reader::new(b);
    let mut v = None;
    while !r.done() {
        let (field, wire) = r.key()?;
        v = Some(match (field, wire) {
            (1, 2) => Value::String(String::from_utf8_lossy(r.bytes()?).into_owned()),
            (2, 5) => Value::Float(f32::from_le_bytes(r.fixed(4)?.try_into().expect("4 bytes"))),
            (3, 1) => Value::Double(f64::from_le_bytes(r.fixed(8)?.try_into().expect("8 bytes"))),
            (4, 0) => Value::Int(r.varint()? as i64),
            (5, 0) => Value::Uint(r.varint()?),
            (6, 0) => {
                let u = r.varint()?;
                Value::Int(((u >> 1) as i64) ^ -((u & 1) as i64))
            }
            (7, 0) => Value::Bool(r.varint()? != 0),
            (_, wire) => {
                r.skip(wire)?;
                continue;
            }
        });
    }
    v.map_or_else(|| bad("a value with no content"), Ok)
}

fn decode_feature(b: &[u8]) -> Result<Feature> {
    let mut r = Reader::new(b);
    let mut f = Feature { id: None, kind: GeomType::Unknown, tags: Vec::new(), parts: Vec::new() };
    let mut cmds = Vec::new();
    while !r.done() {
        match r.key()? {
            (1, 0) => f.id = Some(r.varint()?),
            (2, 2) => {
                let tags = r.packed()?;
                if tags.len() % 2 != 0 {
                    return bad("an odd number of tag indexes");
                }
                f.tags = tags.chunks_exact(2).map(|c| (c[0], c[1])).collect();
            }
            (3, 0) => {
                f.kind = match r.varint()? {
                    1 => GeomType::Point,
                    2 => GeomType::LineString,
                    3 => GeomType::Polygon,
                    _ => GeomType::Unknown,
                }
            }
            (4, 2) => cmds = r.packed()?,
            (_, wire) => r.skip(wire)?,
        }
    }
    f.parts = decode_geometry(f.kind, &cmds)?;
    Ok(f)
}

fn decode_layer(b: &[u8]) -> Result<Layer> {
    let mut r = Reader::new(b);
    let mut layer = Layer { name: String::new(), extent: 4096, keys: Vec::new(), values: Vec::new(), features: Vec::new() };
    while !r.done() {
        match r.key()? {
            (1, 2) => layer.name = String::from_utf8_lossy(r.bytes()?).into_owned(),
            (2, 2) => layer.features.push(decode_feature(r.bytes()?)?),
            (3, 2) => layer.keys.push(String::from_utf8_lossy(r.bytes()?).into_owned()),
            (4, 2) => layer.values.push(decode_value(r.bytes()?)?),
            (5, 0) => layer.extent = u32::try_from(r.varint()?).unwrap_or(0),
            (_, wire) => r.skip(wire)?,
        }
    }
    if layer.extent == 0 {
        return bad("a layer with extent 0");
    }
    Ok(layer)
}

/// Every layer of a tile (uncompressed bytes).
pub fn decode(tile: &[u8]) -> Result<Vec<Layer>> {
    let mut r = Reader::new(tile);
    let mut layers = Vec::new();
    while !r.done() {
        match r.key()? {
            (3, 2) => layers.push(decode_layer(r.bytes()?)?),
            (_, wire) => r.skip(wire)?,
        }
    }
    Ok(layers)
}
