/**
 * Rewrites a JSON Schema (as `z.toJSONSchema` emits it) into the spelling every MCP client
 * maps without loss, accepting exactly the same JSON values. The rules are those of MCP
 * Inspector 2.12's schema portability check (`--strict`), which flags what some clients
 * (OpenAPI-subset function declarations, single-`type` dialects) reject or drop:
 *
 * * `type: ["string", "null"]` → `anyOf: [{type: "string"}, {type: "null"}]`;
 * * a schema with no validation keyword (`{}` from `z.unknown()`) → `true` where a boolean
 *   schema is usual (`additionalProperties` and its kin), else an `anyOf` of the six JSON
 *   types;
 * * a bare boolean schema elsewhere → `{not: {}}` for `false`, the six-type `anyOf` for `true`.
 *
 * Integer bounds at ±(2^53 − 1), which zod adds to every `.int()`, say nothing a client
 * needs and are dropped.
 */

type Schema = Record<string, unknown>;

/** Keywords whose value may be a boolean schema without any client minding. */
const BOOLEAN_SCHEMA_KEYWORDS = new Set([
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
]);
const SCHEMA_KEYWORDS = [
  'items',
  'contains',
  'not',
  'propertyNames',
  'if',
  'then',
  'else',
  'contentSchema',
  ...BOOLEAN_SCHEMA_KEYWORDS,
];
const SCHEMA_LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'dependentSchemas', '$defs'];
/** Keywords that constrain a value; a schema with none of them accepts anything. */
const CONSTRAINING = new Set([
  'type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum',
  'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'format', 'contentMediaType',
  'contentEncoding', 'contentSchema', 'maxItems', 'minItems', 'uniqueItems', 'maxContains',
  'minContains', 'maxProperties', 'minProperties', 'required', 'dependentRequired', 'allOf',
  'anyOf', 'oneOf', 'not', 'items', 'prefixItems', 'contains', 'additionalItems',
  'unevaluatedItems', 'properties', 'patternProperties', 'additionalProperties',
  'unevaluatedProperties', 'propertyNames', 'dependentSchemas', '$ref', '$dynamicRef',
]); // prettier-ignore

const JSON_TYPES = ['string', 'number', 'boolean', 'object', 'array', 'null'];

function anyJsonValue(): Schema {
  return { anyOf: JSON_TYPES.map((type) => ({ type })) };
}

export function portableJsonSchema(schema: Schema): Schema {
  return rewrite(schema, undefined) as Schema;
}

function rewrite(node: unknown, keyword: string | undefined): unknown {
  const booleanAllowed = keyword !== undefined && BOOLEAN_SCHEMA_KEYWORDS.has(keyword);
  if (typeof node === 'boolean') {
    if (booleanAllowed) return node;
    return node ? anyJsonValue() : { not: {} };
  }
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
  const out: Schema = { ...(node as Schema) };
  for (const key of SCHEMA_MAP_KEYWORDS) {
    const map = out[key];
    if (typeof map === 'object' && map !== null && !Array.isArray(map)) {
      out[key] = Object.fromEntries(
        Object.entries(map).map(([name, sub]) => [name, rewrite(sub, key)]),
      );
    }
  }
  for (const key of SCHEMA_LIST_KEYWORDS) {
    if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map((sub) => rewrite(sub, key));
  }
  for (const key of SCHEMA_KEYWORDS) {
    if (key in out) out[key] = rewrite(out[key], key);
  }
  if (Array.isArray(out.type)) {
    const types = out.type as string[];
    delete out.type;
    if (types.length === 1) out.type = types[0];
    else {
      const branches = types.map((type) => ({ type }));
      if (out.anyOf === undefined) out.anyOf = branches;
      else out.allOf = [...((out.allOf as unknown[]) ?? []), { anyOf: branches }];
    }
  }
  if (out.type === 'integer') {
    if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum;
    if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
  }
  if (keyword !== 'not' && !Object.keys(out).some((key) => CONSTRAINING.has(key))) {
    return booleanAllowed ? true : { ...out, ...anyJsonValue() };
  }
  return out;
}
