// zod schemas as JSON Schema 2020-12 (the dialect of OpenAPI 3.1), for the OpenAPI document and
// agent-docs. z.toJSONSchema does the conversion; this module adds what it cannot see: that a
// trimmed string must hold a non-space character, and the cross-field rules of the location-map
// request, which live in a superRefine (test/docs.test.ts checks that zod and the JSON Schema
// accept the same bodies).
import { z } from 'zod';
import * as responses from '../api/responses.ts';
import * as requests from '../api/schemas.ts';
import { MAX_IMAGE_SIDE, MAX_TICKERS } from '../api/schemas.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON Schema is JSON of any shape
export type JsonSchema = Record<string, any>;

export const COMPONENT_PREFIX = '#/components/schemas/';

// ---- schemas of the formats operations.ts lists as opaque content

const { Location } = responses;

/** A GeoJSON response: Points in [lng, lat], the JSON row's fields (less id, lat, lng) as
 * properties, and the brand always present. */
export const LocationFeature = z
  .object({
    type: z.literal('Feature'),
    id: z.string().describe('The location id (loc_ and 16 hex digits).'),
    geometry: z.object({
      type: z.literal('Point'),
      coordinates: z.tuple([z.number().describe('Longitude.'), z.number().describe('Latitude.')]).describe('[lng, lat]: the opposite order of JSON and CSV.'),
    }),
    properties: Location.omit({ id: true, lat: true, lng: true }).extend({ brand: z.string().describe('Canonical brand name.') }),
  })
  .describe('One storefront as a GeoJSON Point feature.');

export const LocationMapGeoJson = z
  .object({
    type: z.literal('FeatureCollection'),
    coverage_confidence: responses.LocationMapJson.shape.coverage_confidence,
    open_at: responses.LocationMapJson.shape.open_at,
    hours_unknown: responses.LocationMapJson.shape.hours_unknown,
    features: z.array(LocationFeature),
  })
  .describe('format geojson: a FeatureCollection of Point features, with coverage_confidence (and, with open_at, open_at and hours_unknown) as foreign members (RFC 7946 §6.1).');

/** Every named response schema: the zod exports of responses.ts and the GeoJSON shapes above. */
function namedOutputs(): Map<z.ZodType, string> {
  const names = new Map<z.ZodType, string>();
  for (const [name, schema] of Object.entries(responses)) {
    if (schema instanceof z.ZodType) names.set(schema, componentName(name));
  }
  names.set(LocationFeature, 'LocationFeature');
  names.set(LocationMapGeoJson, 'LocationMapGeoJson');
  return names;
}

/** The request bodies, named as schemas.ts exports them. */
function namedInputs(bodies: z.ZodType[]): Map<z.ZodType, string> {
  const names = new Map<z.ZodType, string>();
  for (const [name, schema] of Object.entries(requests)) {
    if (schema instanceof z.ZodType && bodies.includes(schema)) names.set(schema, componentName(name));
  }
  for (const [i, body] of bodies.entries()) if (!names.has(body)) names.set(body, `RequestBody${i + 1}`);
  return names;
}

/** SOURCE_TYPE -> SourceType; LocationMapJson stays. */
function componentName(exportName: string): string {
  if (!/^[A-Z0-9_]+$/.test(exportName)) return exportName;
  return exportName
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

// ---- conversion

const SAFE_INT = Number.MAX_SAFE_INTEGER;

/** A string schema that trims its input before checking length: a string of spaces is then
 * empty, so the JSON Schema must ask for a non-space character too. */
function trimsInput(schema: z.core.$ZodType): boolean {
  const def = schema._zod.def as { type: string; checks?: { _zod: { def: { check: string } } }[] };
  if (def.type !== 'string' || !def.checks?.some((c) => c._zod.def.check === 'overwrite')) return false;
  const probe = (schema as unknown as z.ZodString).safeParse(' a ');
  return probe.success && probe.data === 'a';
}

const override = (ctx: { zodSchema: z.core.$ZodType; jsonSchema: JsonSchema }) => {
  const json = ctx.jsonSchema;
  if (trimsInput(ctx.zodSchema) && (json.minLength ?? 0) >= 1 && json.pattern === undefined) json.pattern = '\\S';
};

/** Removes what is noise in a component: the dialect and id markers zod adds at the top, and
 * the safe-integer range zod gives every z.int() (nothing the service sends comes near it). */
function tidy(schema: JsonSchema): JsonSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$schema' || k === '$id') continue;
      if ((k === 'minimum' && v === -SAFE_INT) || (k === 'maximum' && v === SAFE_INT)) continue;
      out[k] = walk(v);
    }
    return out;
  };
  return walk(schema) as JsonSchema;
}

function convertRegistry(names: Map<z.ZodType, string>, io: 'input' | 'output'): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [schema, id] of names) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, { target: 'draft-2020-12', io, uri: (id) => COMPONENT_PREFIX + id, override });
  const schemas: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(out.schemas)) schemas[id] = tidy(schema as JsonSchema);
  return schemas;
}

/** One zod schema on its own (query parameters), shared schemas inlined. */
export function inlineSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return tidy(z.toJSONSchema(schema, { target: 'draft-2020-12', io, override }) as JsonSchema);
}

export interface SchemaSet {
  /** components.schemas: response schemas (output), request bodies (input). */
  components: Record<string, JsonSchema>;
  /** The component of a zod schema, when it has one. */
  refOf(schema: z.ZodType): JsonSchema | undefined;
}

/** Components for every response schema and for the given request bodies (query objects
 * become parameters, not components). */
export function buildSchemas(bodies: z.ZodType[]): SchemaSet {
  const outputs = namedOutputs();
  const inputs = namedInputs(bodies);
  const components = { ...convertRegistry(outputs, 'output'), ...convertRegistry(inputs, 'input') };
  const request = inputs.get(requests.LocationMapRequest);
  if (request) Object.assign(components[request], locationMapRules(components[request]));
  const nearby = inputs.get(requests.NearbyRequest);
  if (nearby) Object.assign(components[nearby], NEARBY_RULES);
  const overlap = inputs.get(requests.OverlapRequest);
  if (overlap) Object.assign(components[overlap], OVERLAP_RULES);
  const ids = new Map([...outputs, ...inputs]);
  return {
    components,
    refOf(schema) {
      const id = ids.get(schema);
      return id ? { $ref: COMPONENT_PREFIX + id } : undefined;
    },
  };
}

// ---- the location-map request's superRefine, in JSON Schema

/** NearbyRequest's superRefine in schemas.ts, in JSON Schema. */
const NEARBY_RULES: JsonSchema = {
  not: { required: ['brand', 'tickers'] },
  description: 'Give `brand`, or `tickers`, or neither (stores of any brand); not both. Unknown fields are rejected.',
};

/** "One of a and b, not both" as JSON Schema. The "at least one" half is a condition, not
 * `anyOf` of two `required` lists: openapi-generator's typescript-fetch and python generators
 * drop a model's enums when it sees that `anyOf` (the generated TypeScript then does not compile;
 * scripts/client-test.sh builds both clients). */
function oneOrOther(a: string, b: string): { not: JsonSchema; condition: JsonSchema } {
  return { not: { required: [a, b] }, condition: { if: { not: { required: [a] } }, then: { required: [b] } } };
}

/** OverlapRequest's superRefine in schemas.ts, in JSON Schema. */
const OVERLAP_RULES: JsonSchema = {
  not: oneOrOther('brands', 'tickers').not,
  allOf: [oneOrOther('brands', 'tickers').condition],
  description: 'Give `brands` or `tickers` (not both). Unknown fields are rejected.',
};

const whenTrue = (field: string) => ({ properties: { [field]: { const: true } }, required: [field] });

/** Mirrors each rule of LocationMapRequest's superRefine in schemas.ts. One cannot be said in
 * JSON Schema: bounds must have south below north; the description says so. */
export function locationMapRules(schema: JsonSchema): JsonSchema {
  const props = schema.properties as Record<string, JsonSchema>;
  const scales: JsonSchema[] = [];
  for (let s = props.scale.minimum + 1; s <= props.scale.maximum; s++) {
    const max = Math.floor(MAX_IMAGE_SIDE / s);
    // A default side that is too large at this scale has to be given explicitly.
    const required = ['width', 'height'].filter((side) => props[side].default * s > MAX_IMAGE_SIDE);
    scales.push({
      if: { properties: { scale: { const: s } }, required: ['scale'] },
      then: { properties: { width: { maximum: max }, height: { maximum: max } }, ...(required.length ? { required } : {}) },
    });
  }
  const colours: JsonSchema[] = [];
  for (let k = 1; k < MAX_TICKERS; k++) {
    colours.push({
      if: { properties: { tickers: { maxItems: k } }, required: ['tickers'] },
      then: { properties: { marker_colors: { maxItems: k } } },
    });
  }
  const brandOrTickers = oneOrOther('brand', 'tickers');
  return {
    not: brandOrTickers.not,
    dependentRequired: {
      radius_km: ['city'],
      center: ['zoom'],
      zoom: ['center'],
      marker_colors: ['tickers'],
      regions: ['focus_country'],
      background: ['focus_country'],
    },
    allOf: [
      brandOrTickers.condition,
      ...scales,
      ...colours,
      { if: whenTrue('mainland_only'), then: { required: ['focus_country'] } },
      { if: whenTrue('conus'), then: { required: ['focus_country'], properties: { focus_country: { pattern: '^([Uu][Ss]|auto)$' } } } },
    ],
    description: [
      'Give `brand` or `tickers` (not both).',
      '`radius_km` needs `city`; `center` and `zoom` go together; `marker_colors` needs `tickers` and has at most one colour per ticker;',
      `\`width\` x \`scale\` and \`height\` x \`scale\` stay within ${MAX_IMAGE_SIDE};`,
      '`mainland_only`, `conus`, `regions` and `background` need `focus_country`, and `conus` applies to the US only;',
      '`bounds` must have south below north. Unknown fields are rejected.',
    ].join(' '),
  };
}
