// The API as a page's signed-in user (its token from localStorage): `{status, body}` of a call.
export const pageApi = (page) => (method, url, body) =>
  page.evaluate(
    async ({ method, url, body }) => {
      const token = JSON.parse(localStorage.getItem('wb.auth')).token;
      const r = await fetch(url, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: r.status, body: r.status === 204 ? null : await r.json() };
    },
    { method, url, body },
  );
