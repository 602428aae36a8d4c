//! storemap-render: draws maps. Web Mercator with slippy-map zoom (zoom 0 = the world in
//! 256 px), an offline basemap from Natural Earth country shapes, theme palettes, markers
//! stamped from a pre-rendered sprite, and PNG/JPEG encoding with the requested DPI.
//! Nothing here knows about Node, HTTP or the dataset.

mod basemap;
mod camera;
mod color;
mod encode;
mod error;
mod render;
mod theme;

pub use basemap::Basemap;
pub use camera::{Camera, Viewport};
pub use color::parse_hex;
pub use encode::ImageFormat;
pub use error::{RenderError, Result};
pub use render::{render, MapRequest, MarkerGroup, MAX_SIDE};
pub use theme::{Theme, Themes};
