//! Brand-name normalization: the one definition of "the same name" used by alias resolution,
//! the importers' brand matching and the suggestions.

/// Leading articles dropped by the "without a leading article" variant.
const ARTICLES: [&str; 12] = ["the", "a", "la", "le", "les", "l", "el", "los", "las", "il", "der", "die"];

/// Lower-cases, drops apostrophes, turns `&` into `and`, and folds every run of other
/// punctuation and white space into one space. CJK text passes through unchanged (but for
/// spaces), so `マクドナルド` stays a key of its own.
pub fn normalize_name(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_space = false;
    for ch in s.chars().map(fold_width).flat_map(char::to_lowercase) {
        match ch {
            '\'' | '’' | '‘' | '`' | '´' | 'ʼ' => {}
            '&' => {
                push_word(&mut out, &mut pending_space, "and");
                pending_space = true;
            }
            c if c.is_alphanumeric() => {
                if pending_space && !out.is_empty() {
                    out.push(' ');
                }
                pending_space = false;
                out.push(fold_accent(c));
            }
            _ => pending_space = true,
        }
    }
    out
}

fn push_word(out: &mut String, pending_space: &mut bool, w: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    *pending_space = false;
    out.push_str(w);
}

/// Fullwidth forms as their ASCII letters, digits and signs (Unicode's compatibility mapping of
/// U+FF01-FF5E, and the ideographic space): a Japanese keyboard's "ＭＣＤ" is "MCD".
pub(crate) fn fold_width(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{3000}' => ' ',
        c => c,
    }
}

/// A ticker as the index keys it: trimmed, fullwidth forms folded, upper case ("ｍｃｄ" is MCD).
pub(crate) fn ticker_key(s: &str) -> String {
    s.trim().chars().map(fold_width).collect::<String>().to_uppercase()
}

/// Folds the Latin accents that users commonly leave out ("Tim Hortons" vs "Hortón").
fn fold_accent(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => 'a',
        'ç' => 'c',
        'è' | 'é' | 'ê' | 'ë' => 'e',
        'ì' | 'í' | 'î' | 'ï' => 'i',
        'ñ' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' => 'o',
        'ù' | 'ú' | 'û' | 'ü' => 'u',
        'ý' | 'ÿ' => 'y',
        c => c,
    }
}

/// Every lookup key of a name, most specific first: the normalized form, the same without
/// spaces, and (when the name starts with an article) both again without the article.
pub fn name_keys(s: &str) -> Vec<String> {
    let n = normalize_name(s);
    if n.is_empty() {
        return Vec::new();
    }
    let mut keys = vec![n.clone()];
    let mut push = |k: String| {
        if !k.is_empty() && !keys.contains(&k) {
            keys.push(k);
        }
    };
    push(n.replace(' ', ""));
    if let Some((first, rest)) = n.split_once(' ') {
        if ARTICLES.contains(&first) {
            push(rest.to_string());
            push(rest.replace(' ', ""));
        }
    }
    keys
}

/// Lower case one character at a time: the rows are compared that way (no allocation per row),
/// so filters and index keys are folded the same way. `str::to_lowercase` would differ on a
/// final capital sigma, and "ΠΑΤΡΑΣ" would not match itself.
pub(crate) fn fold_case(s: &str) -> String {
    s.chars().flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_case_apostrophes_and_punctuation() {
        assert_eq!(normalize_name("McDonald's"), "mcdonalds");
        assert_eq!(normalize_name("  MCDONALD’S  "), "mcdonalds");
        assert_eq!(normalize_name("Dunkin'  Donuts"), "dunkin donuts");
        assert_eq!(normalize_name("Marks & Spencer"), "marks and spencer");
        assert_eq!(normalize_name("7-Eleven"), "7 eleven");
        assert_eq!(normalize_name("Café Nero"), "cafe nero");
        assert_eq!(normalize_name("マクドナルド"), "マクドナルド");
        // Fullwidth forms, as a Japanese keyboard types them, are their ASCII selves.
        assert_eq!(normalize_name("ＭｃＤｏｎａｌｄ’ｓ"), "mcdonalds");
        assert_eq!(normalize_name("ＭＣＤ"), "mcd");
        assert_eq!(normalize_name("セブン　イレブン"), "セブン イレブン");
    }

    #[test]
    fn keys_cover_spaces_and_articles() {
        assert_eq!(name_keys("The Home Depot"), vec!["the home depot", "thehomedepot", "home depot", "homedepot"]);
        assert_eq!(name_keys("Taco Bell"), vec!["taco bell", "tacobell"]);
        assert_eq!(name_keys("Aldi"), vec!["aldi"]);
        assert!(name_keys("  '' ").is_empty());
    }
}
