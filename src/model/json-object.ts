// The one shape check every model response parser needs: a JSON object (not null, not an array).

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
