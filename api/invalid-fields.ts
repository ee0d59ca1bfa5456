import type { RouteConfig } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { routePath } from 'hono/route';
import type { ZodType } from 'zod';

/*
 * @hono/zod-openapi validates a request one part at a time (query, path,
 * headers, body) and answers at the first part that fails, so a request wrong
 * in its path and its body heard only about the path. When one part fails,
 * these check every part with the route's own schemas, so the 422 names every
 * invalid field at once.
 */

/** One invalid field: `<part>.<field path>` (part: param, query, header, json) and zod's message. */
export interface InvalidField {
  path: string;
  message: string;
}

type Part = 'param' | 'query' | 'header' | 'json';

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;
const mediaTypeOf = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase();

/** The route a request matched, among the routes registered for the OpenAPI document. */
export function routeFinder(definitions: () => ReadonlyArray<{ type: string }>): (c: Context) => RouteConfig | undefined {
  let byKey: Map<string, RouteConfig> | undefined;
  return (c) => {
    // Built on first use: routes are registered after the app (and its hook) are made.
    byKey ??= new Map(
      definitions()
        .filter((d): d is { type: 'route'; route: RouteConfig } => d.type === 'route')
        .map((d) => [`${d.route.method.toUpperCase()} ${d.route.path.replaceAll(/\/{(.+?)}/g, '/:$1')}`, d.route]),
    );
    return byKey.get(`${c.req.method} ${routePath(c)}`);
  };
}

/** The JSON body's schema, and whether the route requires a body. */
function bodySchemaOf(request: NonNullable<RouteConfig['request']>): { schema: ZodType; required: boolean } | undefined {
  for (const [mediaType, media] of Object.entries(request.body?.content ?? {})) {
    const schema = media && 'schema' in media ? media.schema : undefined;
    if (JSON_MEDIA_TYPE.test(mediaType) && schema && typeof schema === 'object' && 'safeParseAsync' in schema) return { schema: schema as ZodType, required: request.body?.required === true };
  }
  return undefined;
}

/** A part of the request as @hono/zod-openapi's validators read it. */
function partValue(c: Context, part: Exclude<Part, 'json'>, schema: ZodType): unknown {
  if (part === 'param') return c.req.param();
  if (part === 'query') return Object.fromEntries(Object.entries(c.req.queries()).map(([k, v]) => [k, v.length === 1 ? v[0] : v]));
  // Header names arrive lower-cased; the schema's own spelling of each name wins, as in zValidator.
  const shape = 'shape' in schema && schema.shape && typeof schema.shape === 'object' ? Object.keys(schema.shape) : [];
  const spelling = new Map(shape.map((k) => [k.toLowerCase(), k]));
  return Object.fromEntries(Object.entries(c.req.header()).map(([k, v]) => [spelling.get(k) ?? k, v]));
}

/**
 * Every invalid field of the request, across path, query, headers and JSON
 * body, in that order. A body is read only when it is JSON or when the route
 * requires one and no content type was sent, as the validators do; a body
 * that does not parse is one invalid field, `json`.
 */
export async function invalidFields(c: Context, request: RouteConfig['request']): Promise<InvalidField[]> {
  if (!request) return [];
  const out: InvalidField[] = [];
  const check = async (part: Part, schema: ZodType, value: unknown) => {
    const result = await schema.safeParseAsync(value);
    if (!result.success) out.push(...result.error.issues.map((i) => ({ path: [part, ...i.path.map(String)].join('.'), message: i.message })));
  };
  const parts: Array<[Exclude<Part, 'json'>, unknown]> = [
    ['param', request.params],
    ['query', request.query],
    ['header', request.headers],
  ];
  for (const [part, schema] of parts) {
    if (schema && !Array.isArray(schema)) await check(part, schema as ZodType, partValue(c, part, schema as ZodType));
  }
  const body = bodySchemaOf(request);
  if (body) {
    const contentType = c.req.header('content-type');
    const isJson = contentType !== undefined && JSON_MEDIA_TYPE.test(mediaTypeOf(contentType));
    // Another content type is refused (415) once the rest is right; an optional body is read only when it is JSON.
    if (isJson || (contentType === undefined && body.required)) {
      let value: unknown = {};
      let readable = true;
      if (isJson) {
        try {
          value = await c.req.json();
        } catch {
          readable = false;
          out.push({ path: 'json', message: 'Malformed JSON in request body' });
        }
      }
      if (readable) await check('json', body.schema, value);
    }
  }
  return out;
}
