/**
 * The parts of OpenAPI 3.1 labdeck produces (a subset, typed so the API page can walk it), and the helpers a
 * route declaration (server/route.ts) writes its responses and parameters with. server/openapi.ts builds the
 * document from the declarations.
 */

export type SchemaObject = Record<string, unknown>;
export interface MediaTypeObject {
  schema: SchemaObject;
  example?: unknown;
  encoding?: Record<string, { contentType?: string }>;
}
export interface HeaderObject {
  description: string;
  schema: SchemaObject;
}
export interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaTypeObject>;
}
export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description?: string;
  schema: SchemaObject;
}
export interface RequestBodyObject {
  description?: string;
  required?: boolean;
  content: Record<string, MediaTypeObject>;
}
export type SecurityRequirement = Record<string, string[]>;
export interface OperationObject {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  parameters?: ParameterObject[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject>;
  security?: SecurityRequirement[];
  /** Only admins may call it (403 for others). */
  'x-labdeck-admin'?: boolean;
  /** Made from the live deck (one operation per instrument). */
  'x-labdeck-live'?: boolean;
}
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type PathItemObject = Partial<Record<HttpMethod, OperationObject>>;
export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  servers: { url: string; description?: string }[];
  tags: { name: string; description?: string }[];
  security: SecurityRequirement[];
  paths: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, SchemaObject>;
    securitySchemes: Record<string, SchemaObject>;
  };
}

// ---------------------------------------------------------------------------------------------------------
// Responses and parameters.

/** A reference to a component schema of the document. */
export const ref = (name: string): SchemaObject => ({ $ref: `#/components/schemas/${name}` });

export const HTML: MediaTypeObject = { schema: { type: 'string', description: 'An HTML page' } };
export const LOCATION: Record<string, HeaderObject> = { Location: { description: 'Where to go next', schema: { type: 'string' } } };

/** A page, or JSON with `Accept: application/json` / `?format=json`. */
export const pageOrJson = (description: string, schema: string): ResponseObject => ({
  description,
  content: { 'text/html': HTML, 'application/json': { schema: ref(schema) } },
});
export const page = (description: string): ResponseObject => ({ description, content: { 'text/html': HTML } });
export const json = (description: string, schema: string): ResponseObject => ({ description, content: { 'application/json': { schema: ref(schema) } } });
export const redirect = (description: string): ResponseObject => ({ description, headers: { ...LOCATION } });
export const empty = (description: string): ResponseObject => ({ description });
/** An error: the JSON error body, or a page (the error page, or the form again with the message). */
export const error = (description: string): ResponseObject => ({
  description,
  content: { 'application/json': { schema: ref('Error') }, 'text/html': HTML },
});

/** A CSV file to save (Content-Disposition: attachment). */
export const csvDownload = (description: string): ResponseObject => ({
  description,
  headers: { 'Content-Disposition': { description: 'attachment; filename="…csv"', schema: { type: 'string' } } },
  content: { 'text/csv': { schema: { type: 'string' } } },
});

export const query = (name: string, description: string, schema: SchemaObject = { type: 'string' }): ParameterObject => ({
  name,
  in: 'query',
  description,
  schema,
});
export const HX_REQUEST: ParameterObject = {
  name: 'HX-Request',
  in: 'header',
  description: '"true" (htmx): answer an HTML fragment instead of a whole page',
  schema: { type: 'string', enum: ['true'] },
};

export const FORMAT = query('format', 'json or html: overrides the Accept header', { type: 'string', enum: ['json', 'html'] });
