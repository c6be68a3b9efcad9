// Stand-ins for what cannot run here, for the Playwright suite:
//  - an OpenAI-compatible model (POST /v1/chat/completions, GET /v1/models) with scripted,
//    streamed answers chosen by the question's words;
//  - the upstream "search engines" that the real SearXNG queries through json_engine.
// Everything is deterministic. Listens on 127.0.0.1:$FAKE_PORT (3998).
import http from 'node:http';

const port = Number(process.env.FAKE_PORT ?? 3998);

const item = (link, name, snippet) => ({ link, name, snippet });

function engine(which, q) {
  const query = q.toLowerCase();
  if (query.includes('xss')) {
    return which === 'a'
      ? [item('https://evil.example.org/page', '<img src=x onerror=alert(1)>Evil <b>title</b>', '<script>alert(2)</script> snippet with html')]
      : [];
  }
  if (query.includes('tokio') || query.includes('rust') || query.includes('运行时')) {
    return which === 'a'
      ? [
          item('https://docs.example.org/tokio/tutorial/', 'Tokio tutorial', 'Tokio is an asynchronous runtime for the Rust programming language.'),
          item('https://blog.example.com/async-runtimes', 'Comparing Rust async runtimes', 'Tokio, async-std and smol compared on features and speed.'),
          item('https://forum.example.net/t/which-runtime', 'Which async runtime should I use?', 'Most people pick Tokio for servers.'),
        ]
      : [
          // Found by both engines (over http here): SearXNG merges it and ranks it first.
          item('http://docs.example.org/tokio/tutorial/', 'Tokio tutorial', 'Tokio is an asynchronous runtime for the Rust programming language.'),
          item('https://news.example.cn/tokio-1-50', 'Tokio 1.50 发布', 'Tokio 1.50 改进了调度器的性能。'),
        ];
  }
  return [];
}

function answerFor(question) {
  const q = question.toLowerCase();
  if (q.includes('xss')) {
    return {
      pace: 20,
      chunks: ['Evil <script>alert(1)</script> ', 'markup [1]. <img src=x onerror=alert(3)> ', '[click me](javascript:alert(4)) and ', '[safe link](https://example.org/safe).\n\n', '<script>alert(5)</script>\n'],
    };
  }
  if (q.includes('slow') || q.includes('慢')) {
    return { pace: 150, chunks: Array.from({ length: 200 }, (_, i) => `word${i} `) };
  }
  return {
    pace: 40,
    chunks: ['Tokio 是 Rust 最常用的', '异步运行时 [1]。', '它负责任务调度和', '网络 I/O [2]。', '另见 [9]。'],
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function chat(req, res, body) {
  const messages = body.messages ?? [];
  const question = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // Agent mode: with the web_search tool offered, search once, then answer citing the
  // number the tool output gave.
  const offersSearch = (body.tools ?? []).some((tool) => tool.function?.name === 'web_search');
  if (offersSearch && question.toLowerCase().includes('agent')) {
    const toolOutput = messages.find((m) => m.role === 'tool')?.content;
    if (!toolOutput) {
      const call = { index: 0, id: 'call_1', type: 'function', function: { name: 'web_search', arguments: '{"query": "Tokio runtime"}' } };
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: '先搜索一下。' } }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [call] } }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\n`);
      res.write('data: [DONE]\n\n');
      return res.end();
    }
    const first = toolOutput.match(/^\[(\d+)\]/)?.[1] ?? '1';
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: `Tokio 是 Rust 的异步运行时 [${first}]。` } }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    res.write('data: [DONE]\n\n');
    return res.end();
  }
  const { pace, chunks } = answerFor(question);
  let closed = false;
  res.on('close', () => { closed = true; });
  for (const chunk of chunks) {
    if (closed) return;
    await sleep(pace);
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: chunk }, finish_reason: null }] })}\n\n`);
  }
  res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
  res.write('data: [DONE]\n\n');
  res.end();
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, `http://127.0.0.1:${port}`);
  let raw = '';
  req.on('data', (data) => { raw += data; });
  req.on('end', () => {
    if (url.pathname === '/health') return res.end('ok');
    if (url.pathname === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model' }] }));
    }
    if (url.pathname === '/v1/chat/completions' && req.method === 'POST') {
      let body = {};
      try { body = JSON.parse(raw); } catch { /* an empty body gets the default answer */ }
      return void chat(req, res, body);
    }
    if (url.pathname === '/a' || url.pathname === '/b') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ items: engine(url.pathname.slice(1), url.searchParams.get('q') ?? '') }));
    }
    res.writeHead(404);
    res.end('not found');
  });
});
server.listen(port, '127.0.0.1');
