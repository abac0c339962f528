/**
 * The Standard Schema and Standard JSON Schema interfaces (standardschema.dev), copied as types
 * only — as the spec intends — so that zod 4, valibot, arktype and others can be used for
 * structured output and tool inputs without a dependency of `@agentx/core`. Flattened from the
 * spec's namespaces; structurally identical.
 */

/** A schema library's value that can validate (`~standard.validate`). */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaProps<Input, Output>
}

/** The `~standard` property of a {@link StandardSchemaV1}. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1
  readonly vendor: string
  readonly validate: (
    value: unknown,
    options?: { readonly libraryOptions?: Record<string, unknown> | undefined } | undefined,
  ) => StandardResult<Output> | Promise<StandardResult<Output>>
  readonly types?: { readonly input: Input; readonly output: Output } | undefined
  /** Present when the library also implements Standard JSON Schema. */
  readonly jsonSchema?: StandardJsonSchemaConverter | undefined
}

/** What `validate` returns. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> }

/** One problem found by `validate`. */
export interface StandardIssue {
  readonly message: string
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
}

/** The Standard JSON Schema converter (`~standard.jsonSchema`). */
export interface StandardJsonSchemaConverter {
  readonly input: (options: {
    readonly target: 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | (string & {})
    readonly libraryOptions?: Record<string, unknown> | undefined
  }) => Record<string, unknown>
  readonly output: (options: {
    readonly target: 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | (string & {})
    readonly libraryOptions?: Record<string, unknown> | undefined
  }) => Record<string, unknown>
}

/** The output type a Standard Schema validates to. */
export type InferSchemaOutput<Schema> =
  Schema extends StandardSchemaV1<unknown, infer Output> ? Output : unknown
