// The JSON API (docs/api.md): GET /api/v1/<endpoint>?from&to&filter&...
// Errors come back as {error, hint, column}: thrown as ApiError.
export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : 'HTTP ' + status);
    this.status = status;
    this.hint = body && body.hint;
    this.column = body && body.column;
    this.filter = body && body.filter;
  }
}

export function apiUrl(endpoint, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {}))
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  return '/api/v1/' + endpoint + (q.toString() ? '?' + q : '');
}

export async function api(endpoint, params) {
  let r;
  try {
    r = await fetch(apiUrl(endpoint, params), { credentials: 'same-origin' });
  } catch (e) {
    throw new ApiError(0, { error: 'cannot reach nagare: ' + e.message, hint: 'is `nagare collect` or `nagare serve` still running?' });
  }
  let body = null;
  try { body = await r.json(); } catch { body = null; }
  if (!r.ok) throw new ApiError(r.status, body);
  return body;
}
