// After the run: what the servers under test refused (connections over an address's cap,
// requests over an address's rate). A test that failed because the harness drove the
// server harder than its limits shows here, not as a mystery timeout.
export default async function teardown() {
  const ports = [process.env.E2E_PORT ?? '3999', process.env.E2E_OFFLINE_PORT ?? '3996'];
  for (const url of ports.map((port) => `http://127.0.0.1:${port}`)) {
    try {
      const text = await (await fetch(`${url}/metrics`)).text();
      const refused = text
        .split('\n')
        .filter((line) => /^cited_(connections_refused|requests_limited)_total\{/.test(line));
      console.log(`[teardown] ${url}: ${refused.length ? refused.join('; ') : 'nothing refused'}`);
    } catch (error) {
      console.log(`[teardown] ${url}: metrics not read (${error})`);
    }
  }
}
