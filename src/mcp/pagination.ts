// Cursor pagination for every list: an opaque cursor that encodes the next offset.

export type Page<T> = { ok: true; items: T[]; nextCursor?: string } | { ok: false; message: string };

export function paginate<T>(items: readonly T[], cursor: unknown, pageSize: number): Page<T> {
  let offset = 0;
  if (cursor !== undefined) {
    const decoded = typeof cursor === 'string' ? decodeCursor(cursor) : null;
    if (decoded === null || decoded > items.length) return { ok: false, message: 'Invalid cursor: pass a nextCursor from an earlier page, unchanged' };
    offset = decoded;
  }
  const end = offset + pageSize;
  const page: Page<T> = { ok: true, items: items.slice(offset, end) };
  if (end < items.length) page.nextCursor = encodeCursor(end);
  return page;
}

function encodeCursor(offset: number): string {
  return btoa(`superpi:${offset}`);
}

function decodeCursor(cursor: string): number | null {
  let text: string;
  try {
    text = atob(cursor);
  } catch {
    // atob throws on anything that is not base64: that is simply an invalid cursor.
    return null;
  }
  const m = /^superpi:(\d{1,9})$/.exec(text);
  return m ? Number(m[1]) : null;
}
