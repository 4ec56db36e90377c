/**
 * A small structural-schema builder: each builder returns an OpenAPI v3 schema node for the CRD
 * and carries, as a phantom type, the TypeScript type of the values it accepts. The CRD manifest
 * and the TypeScript types are both derived from one definition, so they cannot drift.
 */

export interface Validation {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?:
    | 'FieldValueInvalid'
    | 'FieldValueForbidden'
    | 'FieldValueRequired'
    | 'FieldValueDuplicate';
  readonly fieldPath?: string;
  readonly optionalOldSelf?: boolean;
}

/** The subset of OpenAPI v3 that structural CRD schemas use. */
export interface OpenApiSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  enum?: readonly string[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  items?: OpenApiSchema;
  /** A map: any key, each value of this schema. */
  additionalProperties?: OpenApiSchema;
  maxProperties?: number;
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-validations'?: Validation[];
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  /** atomic: server-side apply owns the object as one value, never field by field. */
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
}

/** A schema node whose accepted values have TypeScript type `T`. */
export interface Schema<T> {
  readonly openApi: OpenApiSchema;
  /** Phantom field: never set at run time, only carries `T`. */
  readonly __type?: T;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

interface Common {
  description?: string;
  validations?: Validation[];
}

function node<T>(openApi: OpenApiSchema, common: Common): Schema<T> {
  const out: OpenApiSchema = { ...openApi };
  if (common.description !== undefined) out.description = common.description;
  if (common.validations !== undefined && common.validations.length > 0) {
    out['x-kubernetes-validations'] = common.validations;
  }
  return { openApi: out };
}

export function string<const E extends string = string>(
  opts: Common & {
    enum?: readonly E[];
    pattern?: string;
    format?: string;
    minLength?: number;
    maxLength?: number;
    default?: E;
  } = {},
): Schema<E> {
  const { description, validations, ...rest } = opts;
  return node<E>(
    { type: 'string', ...rest },
    { ...(description && { description }), ...(validations && { validations }) },
  );
}

export function integer(
  opts: Common & { minimum?: number; maximum?: number; format?: 'int32' | 'int64' } = {},
): Schema<number> {
  const { description, validations, ...rest } = opts;
  return node<number>(
    { type: 'integer', ...rest },
    { ...(description && { description }), ...(validations && { validations }) },
  );
}

/** A JSON number, integral or not (a measured value: an error ratio, a latency). */
export function number(opts: Common = {}): Schema<number> {
  return node<number>({ type: 'number' }, opts);
}

export function boolean(opts: Common = {}): Schema<boolean> {
  return node<boolean>({ type: 'boolean' }, opts);
}

/** An RFC 3339 timestamp, carried as a string. */
export function timestamp(opts: Common = {}): Schema<string> {
  return node<string>({ type: 'string', format: 'date-time' }, opts);
}

/** An object whose fields are not described: any JSON object is kept as is. */
export function freeForm(opts: Common = {}): Schema<Record<string, unknown>> {
  return node<Record<string, unknown>>(
    { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    opts,
  );
}

export function array<S extends Schema<unknown>>(
  items: S,
  opts: Common & {
    minItems?: number;
    maxItems?: number;
    listType?: 'atomic' | 'set' | 'map';
    listMapKeys?: string[];
  } = {},
): Schema<Infer<S>[]> {
  const { description, validations, listType, listMapKeys, ...rest } = opts;
  const openApi: OpenApiSchema = { type: 'array', items: items.openApi, ...rest };
  if (listType) openApi['x-kubernetes-list-type'] = listType;
  if (listMapKeys) openApi['x-kubernetes-list-map-keys'] = listMapKeys;
  return node<Infer<S>[]>(openApi, {
    ...(description && { description }),
    ...(validations && { validations }),
  });
}

type Fields = Record<string, Schema<unknown>>;

type RequiredKeys<F extends Fields, R extends keyof F> = { [K in R]: Infer<F[K]> };
type OptionalKeys<F extends Fields, R extends keyof F> = { [K in Exclude<keyof F, R>]?: Infer<F[K]> };
type Flatten<T> = { [K in keyof T]: T[K] };

export type ObjectOf<F extends Fields, R extends keyof F> = Flatten<RequiredKeys<F, R> & OptionalKeys<F, R>>;

export function object<const F extends Fields, const R extends keyof F & string = never>(
  fields: F,
  opts: Common & { required?: readonly R[] } = {},
): Schema<ObjectOf<F, R>> {
  const properties: Record<string, OpenApiSchema> = {};
  for (const [name, schema] of Object.entries(fields)) properties[name] = schema.openApi;
  // The API server drops an empty `properties` when it stores a CRD: a manifest that kept it would
  // differ from what is stored, and `kubectl apply` then takes the CRD's versions from every
  // server-side applier (helm's crds/ install among them) with a conflict.
  const openApi: OpenApiSchema = {
    type: 'object',
    ...(Object.keys(properties).length > 0 && { properties }),
  };
  if (opts.required && opts.required.length > 0) openApi.required = [...opts.required];
  const { required: _required, ...common } = opts;
  return node<ObjectOf<F, R>>(openApi, common);
}

/** Adds a default to a schema node (the API server fills it in on create). */
export function withDefault<T>(schema: Schema<T>, value: T): Schema<T> {
  return { openApi: { ...schema.openApi, default: value } };
}
