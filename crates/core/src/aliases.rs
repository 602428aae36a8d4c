//! Brand resolution: canonical names, variants, alternative names (NSI match names, names in
//! other scripts, curated misspellings) and tickers, all case-insensitive; plus typo-tolerant
//! suggestions for names that resolve to nothing.

use std::collections::HashMap;

use crate::names::{name_keys, normalize_name, ticker_key};
use crate::records::{BrandRecord, TickerRecord};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResolvedBy {
    /// The canonical name, ignoring case.
    Name,
    /// The canonical name without apostrophes, spaces or a leading article.
    Variant,
    /// An alternative name: NSI match name, CJK or English name, curated misspelling.
    AltName,
    Ticker,
}

impl ResolvedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            ResolvedBy::Name => "name",
            ResolvedBy::Variant => "variant",
            ResolvedBy::AltName => "alt_name",
            ResolvedBy::Ticker => "ticker",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolution {
    pub brand: u32,
    pub by: ResolvedBy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suggestion {
    pub brand: u32,
    /// Edit distance between the normalized query and the brand's name (0 for a prefix match).
    pub distance: u32,
}

#[derive(Debug, Default)]
pub struct AliasIndex {
    keys: HashMap<String, (u32, ResolvedBy)>,
    tickers: HashMap<String, u32>,
    /// By ticker key, the brands its company's other brands' names name (`TickerRecord::portfolio`).
    portfolios: HashMap<String, Vec<u32>>,
    /// One space-free key per brand with rows, for suggestions, sorted: prefix matches are
    /// one binary search and a run.
    suggest_keys: Vec<(String, u32)>,
    /// `suggest_keys` positions by key length in chars: a query of length n compares only the
    /// keys within the edit bound of n, never every brand.
    by_len: Vec<Vec<u32>>,
    /// Rank of each brand when several share a key: more verified rows, then more rows.
    weight: Vec<(u32, u32)>,
}

impl AliasIndex {
    pub fn build(brands: &[BrandRecord], tickers: &[TickerRecord]) -> AliasIndex {
        let mut idx = AliasIndex { weight: brands.iter().map(|b| (b.verified_count, b.pool_count())).collect(), ..AliasIndex::default() };
        for (i, b) in brands.iter().enumerate() {
            let i = i as u32;
            for (k, key) in name_keys(&b.name).into_iter().enumerate() {
                idx.insert(key, i, if k == 0 { ResolvedBy::Name } else { ResolvedBy::Variant });
            }
            for alt in &b.alt_names {
                for key in name_keys(alt) {
                    idx.insert(key, i, ResolvedBy::AltName);
                }
            }
            if b.pool_count() > 0 {
                idx.suggest_keys.push((normalize_name(&b.name).replace(' ', ""), i));
            }
        }
        for t in tickers {
            idx.tickers.insert(ticker_key(&t.ticker), t.brand);
        }
        // After every name is in: a portfolio brand is the brand its name names.
        for t in tickers {
            let named: Vec<u32> = t
                .portfolio
                .iter()
                .filter_map(|name| name_keys(name).first().and_then(|k| idx.keys.get(k)).filter(|(_, by)| *by == ResolvedBy::Name).map(|&(b, _)| b))
                .collect();
            if !named.is_empty() {
                idx.portfolios.insert(ticker_key(&t.ticker), named);
            }
        }
        idx.suggest_keys.sort();
        for (pos, (key, _)) in idx.suggest_keys.iter().enumerate() {
            let n = key.chars().count();
            if idx.by_len.len() <= n {
                idx.by_len.resize(n + 1, Vec::new());
            }
            idx.by_len[n].push(pos as u32);
        }
        idx
    }

    /// A key that several brands share goes to the stronger match kind, then to the brand with
    /// more verified rows: "Shell" the fuel brand, not a namesake with three shops.
    fn insert(&mut self, key: String, brand: u32, by: ResolvedBy) {
        let rank = |b: u32, by: ResolvedBy| {
            let kind = match by {
                ResolvedBy::Name => 3,
                ResolvedBy::Variant => 2,
                _ => 1,
            };
            let w = self.weight.get(b as usize).copied().unwrap_or((0, 0));
            (kind, w.0, w.1, std::cmp::Reverse(b))
        };
        match self.keys.get(&key) {
            Some(&(old, old_by)) if rank(old, old_by) >= rank(brand, by) => {}
            _ => {
                self.keys.insert(key, (brand, by));
            }
        }
    }

    pub fn resolve(&self, input: &str) -> Option<Resolution> {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return None;
        }
        let keys = name_keys(trimmed);
        let by_name = keys.first().and_then(|k| self.keys.get(k)).map(|&(brand, by)| Resolution { brand, by });
        let by_ticker = self.tickers.get(&ticker_key(trimmed)).map(|&brand| Resolution { brand, by: ResolvedBy::Ticker });
        // "MCD" is McDonald's ticker and also a small supermarket's name; "Gap" is a brand
        // and the ticker of its company, whose primary brand is Old Navy. A ticker wins unless
        // the text is the exact name of a brand at least as big as the ticker's brand, or of
        // one of the ticker's company's own brands (whichever way it is read, the caller asks
        // for that company, and the name says which of its brands).
        match (by_name, by_ticker) {
            (Some(n), Some(t)) => {
                let bigger = |a: u32, b: u32| self.weight.get(a as usize) >= self.weight.get(b as usize);
                let own = || self.portfolios.get(&ticker_key(trimmed)).is_some_and(|p| p.contains(&n.brand));
                return Some(if n.by == ResolvedBy::Name && (bigger(n.brand, t.brand) || own()) { n } else { t });
            }
            (Some(r), None) | (None, Some(r)) => return Some(r),
            (None, None) => {}
        }
        keys.iter()
            .skip(1)
            .find_map(|k| self.keys.get(k).map(|&(brand, by)| Resolution { brand, by: if by == ResolvedBy::Name { ResolvedBy::Variant } else { by } }))
    }

    /// The brand a ticker names (case-insensitive), whatever brand names the text also matches.
    pub fn ticker(&self, input: &str) -> Option<u32> {
        self.tickers.get(&ticker_key(input)).copied()
    }

    pub fn is_ticker(&self, input: &str) -> bool {
        self.tickers.contains_key(&ticker_key(input))
    }

    /// Close matches by edit distance (Damerau-Levenshtein on the space-free normalized form),
    /// plus prefix matches, best first; ties go to the brand with more verified rows.
    pub fn suggest(&self, input: &str, limit: usize) -> Vec<Suggestion> {
        let q = normalize_name(input).replace(' ', "");
        let qlen = q.chars().count();
        if qlen == 0 || limit == 0 {
            return Vec::new();
        }
        let max = match qlen {
            0..=3 => 1,
            4..=7 => 2,
            _ => 3,
        };
        let mut out: Vec<Suggestion> = Vec::new();
        // Longer names starting with the query: the sorted run from its first place.
        if qlen >= 3 {
            let first = self.suggest_keys.partition_point(|(k, _)| k.as_str() < q.as_str());
            for (key, brand) in self.suggest_keys[first..].iter().take_while(|(k, _)| k.starts_with(&q)) {
                if key.len() > q.len() {
                    out.push(Suggestion { brand: *brand, distance: 0 });
                }
            }
        }
        // Names within the edit bound: only the lengths it allows.
        let lengths = qlen.saturating_sub(max)..=(qlen + max).min(self.by_len.len().saturating_sub(1));
        for positions in self.by_len.get(lengths).into_iter().flatten() {
            for &pos in positions {
                let (key, brand) = &self.suggest_keys[pos as usize];
                if qlen >= 3 && key.len() > q.len() && key.starts_with(&q) {
                    continue; // a prefix match, found above
                }
                let d = strsim::damerau_levenshtein(&q, key);
                if d <= max {
                    out.push(Suggestion { brand: *brand, distance: d as u32 });
                }
            }
        }
        out.sort_by_key(|s| {
            let w = self.weight[s.brand as usize];
            (s.distance, std::cmp::Reverse(w.0), std::cmp::Reverse(w.1), s.brand)
        });
        out.dedup_by_key(|s| s.brand);
        out.truncate(limit);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brand(name: &str, alts: &[&str], rows: u32, verified: u32) -> BrandRecord {
        let mut b = BrandRecord::new(name);
        b.alt_names = alts.iter().map(|s| s.to_string()).collect();
        b.row_end = rows;
        b.verified_count = verified;
        b
    }

    fn index() -> AliasIndex {
        let brands = vec![
            brand("McDonald's", &["マクドナルド", "麦当劳", "Macdonalds"], 100, 90),
            brand("The Home Depot", &[], 50, 40),
            brand("Taco Bell", &[], 30, 20),
            brand("Shell", &[], 80, 70),
            brand("Shell", &[], 3, 0),
            brand("KFC", &[], 60, 50),
        ];
        let tickers = vec![
            TickerRecord { ticker: "MCD".into(), exchange: "NYSE".into(), brand: 0, company: "McDonald's Corp".into(), portfolio: vec![] },
            TickerRecord { ticker: "YUM".into(), exchange: "NYSE".into(), brand: 5, company: "Yum! Brands".into(), portfolio: vec!["Taco Bell".into()] },
        ];
        AliasIndex::build(&brands, &tickers)
    }

    fn resolved(idx: &AliasIndex, q: &str) -> Option<(u32, ResolvedBy)> {
        idx.resolve(q).map(|r| (r.brand, r.by))
    }

    #[test]
    fn resolves_case_apostrophes_spaces_articles() {
        let idx = index();
        assert_eq!(resolved(&idx, "mcdonald's"), Some((0, ResolvedBy::Name)));
        assert_eq!(resolved(&idx, "MCDONALDS"), Some((0, ResolvedBy::Name)));
        assert_eq!(resolved(&idx, "Mc Donalds"), Some((0, ResolvedBy::Variant)));
        assert_eq!(resolved(&idx, "the home depot"), Some((1, ResolvedBy::Name)));
        assert_eq!(resolved(&idx, "home depot"), Some((1, ResolvedBy::Variant)));
        assert_eq!(resolved(&idx, "HomeDepot"), Some((1, ResolvedBy::Variant)));
        assert_eq!(resolved(&idx, "tacobell"), Some((2, ResolvedBy::Variant)));
    }

    #[test]
    fn resolves_alt_names_and_tickers() {
        let idx = index();
        assert_eq!(resolved(&idx, "マクドナルド"), Some((0, ResolvedBy::AltName)));
        assert_eq!(resolved(&idx, "麦当劳"), Some((0, ResolvedBy::AltName)));
        assert_eq!(resolved(&idx, "macdonalds"), Some((0, ResolvedBy::AltName)));
        assert_eq!(resolved(&idx, "mcd"), Some((0, ResolvedBy::Ticker)));
        // Typed in fullwidth forms, as a Japanese keyboard sends them.
        assert_eq!(resolved(&idx, "ＭＣＤ"), Some((0, ResolvedBy::Ticker)));
        assert_eq!(resolved(&idx, "ＭｃＤｏｎａｌｄ＇ｓ"), Some((0, ResolvedBy::Name)));
        // A portfolio ticker resolves to its one primary brand.
        assert_eq!(resolved(&idx, "YUM"), Some((5, ResolvedBy::Ticker)));
        assert_eq!(resolved(&idx, "nosuchbrand"), None);
        assert_eq!(resolved(&idx, "   "), None);
    }

    #[test]
    fn tickers_beat_small_namesakes_but_not_the_brand_itself() {
        let mut brands = vec![brand("McDonald's", &[], 100, 90), brand("MCD", &[], 1, 0), brand("Gap", &[], 50, 40), brand("Old Navy", &[], 30, 20)];
        brands.push(brand("Dolce & Gabbana", &["DG"], 5, 3));
        let t = |ticker: &str, brand: u32| TickerRecord { ticker: ticker.into(), exchange: "NYSE".into(), brand, company: String::new(), portfolio: vec![] };
        let idx = AliasIndex::build(&brands, &[t("MCD", 0), t("GAP", 3), t("DG", 0)]);
        assert_eq!(resolved(&idx, "MCD"), Some((0, ResolvedBy::Ticker)));
        assert_eq!(resolved(&idx, "mcd"), Some((0, ResolvedBy::Ticker)));
        assert_eq!(resolved(&idx, "gap"), Some((2, ResolvedBy::Name)));
        assert_eq!(resolved(&idx, "DG"), Some((0, ResolvedBy::Ticker)));
        // Asked as a ticker only, a ticker that is also a bigger brand's name is the ticker's.
        assert_eq!((idx.ticker(" gap "), idx.ticker("MCD"), idx.ticker("Old Navy")), (Some(3), Some(0), None));
    }

    /// Gap Inc.'s ticker is GAP and its primary brand Old Navy: "Gap" asks for the company's
    /// brand of that name even where Old Navy is the bigger, while a namesake outside the
    /// company still loses to the ticker.
    #[test]
    fn a_ticker_gives_way_to_its_own_companys_brand_of_that_name() {
        let brands = vec![brand("Gap", &[], 5, 4), brand("Old Navy", &[], 30, 20), brand("MCD", &[], 1, 0), brand("McDonald's", &[], 100, 90)];
        let t = |ticker: &str, brand: u32, portfolio: &[&str]| TickerRecord {
            ticker: ticker.into(),
            exchange: "NYSE".into(),
            brand,
            company: String::new(),
            portfolio: portfolio.iter().map(|p| p.to_string()).collect(),
        };
        let idx = AliasIndex::build(&brands, &[t("GAP", 1, &["Gap", "Banana Republic"]), t("MCD", 3, &["McCafé"])]);
        assert_eq!(resolved(&idx, "Gap"), Some((0, ResolvedBy::Name)));
        assert_eq!(resolved(&idx, "GAP"), Some((0, ResolvedBy::Name)));
        assert_eq!(resolved(&idx, "mcd"), Some((3, ResolvedBy::Ticker)));
        // The ticker field still names the primary brand.
        assert_eq!(idx.ticker("Gap"), Some(1));
        assert_eq!(resolved(&idx, "old navy"), Some((1, ResolvedBy::Name)));
    }

    #[test]
    fn shared_names_go_to_the_bigger_brand() {
        assert_eq!(resolved(&index(), "shell"), Some((3, ResolvedBy::Name)));
    }

    #[test]
    fn suggests_close_names_best_first() {
        let idx = index();
        let s = idx.suggest("McDonlds", 5);
        assert_eq!(s.first().map(|s| s.brand), Some(0));
        assert_eq!(s[0].distance, 1);
        let s = idx.suggest("taco", 5);
        assert_eq!(s.first().map(|s| (s.brand, s.distance)), Some((2, 0)));
        assert!(idx.suggest("zzzzzzzzzz", 5).is_empty());
    }

    /// The index answers exactly what comparing the query with every brand would: the
    /// brute-force rule written out here, over many names and every query shape (prefixes,
    /// typos, lengths from 1 to past the longest name, non-Latin text).
    #[test]
    fn the_index_finds_what_a_full_scan_finds() {
        let names = [
            "McDonald's",
            "Starbucks",
            "Star Market",
            "Stars",
            "Shell",
            "Shelly's",
            "KFC",
            "Kroger",
            "Taco Bell",
            "Tesco",
            "Tesco Express",
            "Lidl",
            "Aldi",
            "7-Eleven",
            "Seven Oaks",
            "Carrefour",
            "Carrefour City",
            "ローソン",
            "Lawson",
            "Sbarro",
        ];
        let brands: Vec<BrandRecord> = names.iter().enumerate().map(|(i, n)| brand(n, &[], 10 + i as u32, 5 + i as u32)).collect();
        let idx = AliasIndex::build(&brands, &[]);
        let scan = |input: &str| -> Vec<u32> {
            let q = normalize_name(input).replace(' ', "");
            let qlen = q.chars().count();
            if qlen == 0 {
                return vec![];
            }
            let max = if qlen <= 3 {
                1
            } else if qlen <= 7 {
                2
            } else {
                3
            };
            // (edit distance, bigger brands first, brand): sorted, the order suggestions come in.
            type Hit = (u32, std::cmp::Reverse<(u32, u32)>, u32);
            let mut hits: Vec<Hit> = Vec::new();
            for (i, b) in brands.iter().enumerate() {
                let key = normalize_name(&b.name).replace(' ', "");
                let klen = key.chars().count();
                let d = if qlen >= 3 && key.starts_with(&q) && klen > qlen { 0 } else { strsim::damerau_levenshtein(&q, &key) };
                if d <= max {
                    hits.push((d as u32, std::cmp::Reverse((b.verified_count, b.pool_count())), i as u32));
                }
            }
            hits.sort();
            let mut out: Vec<u32> = Vec::new();
            for h in hits {
                if !out.contains(&h.2) {
                    out.push(h.2);
                }
            }
            out.truncate(5);
            out
        };
        let queries = [
            "s",
            "st",
            "sta",
            "star",
            "starb",
            "starbux",
            "Starbuks",
            "shel",
            "shell",
            "sheel",
            "kfc",
            "kf",
            "krogr",
            "tesco",
            "tesc",
            "tescoexpres",
            "lidl",
            "aldi",
            "aldl",
            "7 eleven",
            "seven",
            "carefour",
            "carrefourcity",
            "ローソ",
            "lawsn",
            "xyzzy",
            "a",
            "",
            "McDonalds",
            "mcdonalds",
            "thisnameislongerthananybrandnameatall",
        ];
        for q in queries {
            let got: Vec<u32> = idx.suggest(q, 5).iter().map(|s| s.brand).collect();
            assert_eq!(got, scan(q), "query {q:?}");
        }
    }
}
