// A strict structural check of the GeoJSON the API returns (RFC 7946, the subset it uses): a
// FeatureCollection of Point Features with numeric [lng, lat] in range and exactly the
// expected property keys. Returns every problem found (empty = valid), so a failing test
// shows all of them at once, capped to keep the message readable.

export interface PointFeature {
  type: 'Feature';
  id?: string | number;
  geometry: { type: 'Point'; coordinates: [number, number] };
  properties: Record<string, unknown>;
}

export interface FeatureCollection {
  type: 'FeatureCollection';
  coverage_confidence?: number | null;
  features: PointFeature[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function geojsonProblems(doc: unknown, propertyKeys: readonly string[], maxProblems = 20): string[] {
  const problems: string[] = [];
  const add = (p: string) => {
    if (problems.length < maxProblems) problems.push(p);
  };
  if (!isObject(doc)) return ['the document is not an object'];
  if (doc.type !== 'FeatureCollection') add(`type is ${JSON.stringify(doc.type)}, not "FeatureCollection"`);
  // coverage_confidence: the one foreign member the API documents (RFC 7946 §6.1).
  for (const k of Object.keys(doc)) if (!['type', 'features', 'bbox', 'coverage_confidence'].includes(k)) add(`unexpected top-level member ${k}`);
  if (!Array.isArray(doc.features)) return [...problems, 'features is not an array'];
  const expected = [...propertyKeys].sort();
  doc.features.forEach((f: unknown, i: number) => {
    const at = `features[${i}]`;
    if (!isObject(f)) return add(`${at} is not an object`);
    if (f.type !== 'Feature') add(`${at}.type is ${JSON.stringify(f.type)}`);
    for (const k of Object.keys(f)) if (!['type', 'id', 'geometry', 'properties', 'bbox'].includes(k)) add(`${at} has unexpected member ${k}`);
    if ('id' in f && typeof f.id !== 'string' && typeof f.id !== 'number') add(`${at}.id is neither a string nor a number`);
    const g = f.geometry;
    if (!isObject(g)) add(`${at}.geometry is not an object`);
    else {
      if (g.type !== 'Point') add(`${at}.geometry.type is ${JSON.stringify(g.type)}`);
      const c = g.coordinates;
      if (!Array.isArray(c) || c.length !== 2 || !c.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        add(`${at}.geometry.coordinates is not two finite numbers: ${JSON.stringify(c)}`);
      } else {
        const [lng, lat] = c as number[];
        if (lng < -180 || lng > 180) add(`${at} longitude ${lng} out of range`);
        if (lat < -90 || lat > 90) add(`${at} latitude ${lat} out of range`);
      }
    }
    if (!isObject(f.properties)) add(`${at}.properties is not an object`);
    else {
      const keys = Object.keys(f.properties).sort();
      if (keys.join() !== expected.join()) add(`${at}.properties keys [${keys}] != [${expected}]`);
    }
  });
  return problems;
}
