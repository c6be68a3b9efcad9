// Stand-ins for what cannot run here, for the Playwright suite:
//  - an OpenAI-compatible model (POST /v1/chat/completions, GET /v1/models) with scripted,
//    streamed answers chosen by the question's words;
//  - the upstream "search engines" that the real SearXNG queries through json_engine.
// Everything is deterministic. Listens on 127.0.0.1:$FAKE_PORT (3998).
import http from 'node:http';

const port = Number(process.env.FAKE_PORT ?? 3998);

const item = (link, name, snippet) => ({ link, name, snippet });

// A 1×1 PNG: the image strip's thumbnails and a favicon.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

// The image strip's pictures ("lighthouse" questions): four PNGs served here, and an SVG
// cited must never serve.
function pictures(q) {
  if (!q.toLowerCase().includes('lighthouse')) return [];
  const items = [1, 2, 3, 4].map((i) => ({ ...item(`https://photos.example.org/lighthouse/${i}`, `Lighthouse photo ${i}`, ''), thumb: `http://127.0.0.1:${port}/pic/${i}.png` }));
  items.splice(1, 0, { ...item('https://photos.example.org/drawing', 'A drawing', ''), thumb: `http://127.0.0.1:${port}/pic/evil.svg` });
  return items;
}

function engine(which, q) {
  const query = q.toLowerCase();
  if (query.includes('lighthouse')) {
    // One source served here (its favicon loads through cited), one elsewhere (its favicon
    // cannot be had: the letter badge stays).
    return which === 'a'
      ? [
          item(`http://127.0.0.1:${port}/lighthouse`, 'Lighthouses of the coast', 'A lighthouse guides ships at night.'),
          item('https://lights.example.org/history', 'A history of lighthouses', 'The first lighthouses burned wood.'),
        ]
      : [];
  }
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

// A long Markdown answer (about 12.6 KB) with headings, paragraphs, lists, a table, code and
// citations, streamed in about 1,800 small chunks: the client's streaming benchmark and the
// test that a streamed answer ends as its one-shot render.
export function longAnswer() {
  const parts = [];
  for (let section = 1; Buffer.byteLength(parts.join('')) < 12_600; section++) {
    parts.push(`## 第 ${section} 部分：Tokio 的运行时\n\n`);
    parts.push(`Tokio 是 Rust 最常用的异步运行时 [1]，它的调度器采用工作窃取 [2]。Async runtimes schedule many tasks on few threads, and **Tokio** is the one most servers pick [${(section % 4) + 1}].\n\n`);
    parts.push(`- 任务调度：每个线程一个本地队列 [2]\n- Timers and *sleep* are driven by the runtime [1]\n- 网络 I/O 由 \`mio\` 驱动 [4]\n\n`);
    if (section % 3 === 0) {
      parts.push('| 运行时 | 特点 |\n|---|:-:|\n| Tokio | 工作窃取 [2] |\n| smol | small |\n\n');
    }
    if (section % 4 === 0) {
      parts.push('```rust\n#[tokio::main]\nasync fn main() {\n    let x = [1, 2];\n}\n```\n\n');
    }
    parts.push(`> 第 ${section} 部分的结论：多数服务器选择 Tokio [3]。\n\n`);
  }
  const text = parts.join('');
  // Chunks of 5 characters: 12.6 KB (UTF-8, much of it Chinese) in about 1,800 of them.
  const chars = Array.from(text);
  const chunks = [];
  for (let i = 0; i < chars.length; i += 5) chunks.push(chars.slice(i, i + 5).join(''));
  return chunks;
}

function answerFor(question, model = 'fake-model') {
  const q = question.toLowerCase();
  // The load harness: each user's answer repeats its own question, so an answer that
  // reached the wrong user shows.
  if (q.startsWith('echo:')) {
    return { pace: 20, chunks: ['You asked ', question.slice(5).trim(), ' [1].'] };
  }
  if (q.includes('long answer') || q.includes('长回答')) {
    return { pace: 5, chunks: longAnswer() };
  }
  if (q.includes('xss')) {
    return {
      pace: 20,
      chunks: ['Evil <script>alert(1)</script> ', 'markup [1]. <img src=x onerror=alert(3)> ', '[click me](javascript:alert(4)) and ', '[safe link](https://example.org/safe).\n\n', '<script>alert(5)</script>\n'],
    };
  }
  // A file added to the conversation is source 3, after the two lighthouse pages.
  if (q.includes('keeper')) {
    return { pace: 20, chunks: ['The keeper logs every passing ship [3].'] };
  }
  // The model picker: the answer names the model that wrote it.
  if (q.includes('which model')) {
    return { pace: 20, chunks: [`Written by ${model} [1].`] };
  }
  // Citation attribution: a claim left uncited that source 1 states, a citation of the
  // wrong source (source 2 states it), a claim no source states.
  if (q.includes('attribute')) {
    return { pace: 20, chunks: ['A lighthouse guides ships at night. ', 'The first lighthouses burned wood [1]. ', 'Bananas grow best in the cold Icelandic winter.'] };
  }
  if (q.includes('uncited')) {
    return { pace: 20, chunks: ['Tokio is the runtime most Rust servers use, ', 'and it is fast.'] };
  }
  // The chaos pass (bench-chaos.mjs): four seconds of answer, long enough to break
  // something in the middle of.
  if (q.includes('chaos')) {
    return { pace: 100, chunks: Array.from({ length: 40 }, (_, i) => (i % 10 === 9 ? `Tokio part${i} [1]. ` : `part${i} `)) };
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

// Research mode: each step is recognised by the JSON shape its system prompt asks for.
// Two loops: the first researches two sub-questions and prunes one, the second fills the
// gap; then the summary and the streamed explanation.
function researchStep(system, user) {
  const slow = user.includes('慢');
  if (system.includes('"sub_questions"')) {
    if (user.includes('第 1 轮') || user.includes('round 1')) {
      return { delay: 0, reply: { anchors: ['Rust'], sub_questions: [
        { question: 'Rust 最常用的异步运行时是什么？', query: 'Rust 异步运行时 Tokio', language: 'zh' },
        { question: '服务器通常用哪个 Rust 运行时？', query: 'Rust 运行时 服务器', language: 'zh' },
      ] } };
    }
    return { delay: 0, reply: { sub_questions: [
      { question: 'Tokio 的调度器有什么改进？', query: 'Tokio 调度器 性能', language: 'zh' },
    ] } };
  }
  // Long enough that a page rendering slowly (a loaded CI machine) still sees the
  // branches running.
  if (system.includes('"multi_anchor_hits"')) return { delay: slow ? 20000 : 2000, reply: { relevant: [1] } };
  if (system.includes('"statement"')) {
    const sub = user.match(/子问题：(.*)/)?.[1] ?? '';
    const statement = sub.includes('调度器')
      ? 'Tokio 1.50 改进了调度器的性能。'
      : sub.includes('服务器') ? '多数服务器选择 Tokio。<img src=x onerror=alert(7)>' : 'Tokio 是 Rust 最常用的异步运行时。';
    return { delay: 0, reply: { statement, reliability: 'high', sources: [1] } };
  }
  if (system.includes('"sufficient"')) {
    return { delay: 0, reply: user.includes('E3:')
      ? { sufficient: true, chain: 'Tokio [1] → 调度器改进 [9]' }
      : { sufficient: false, chain: 'Tokio [1] → 缺口：调度器', prune: ['服务器通常用哪个 Rust 运行时？'] } };
  }
  if (system.includes('"reasoning"')) return { delay: 0, reply: { answer: 'Tokio', confidence: 'high', reasoning: '[1][9]' } };
  if (system.includes('结论') || system.includes('conclusion line')) {
    return { delay: 0, chunks: ['Tokio 是 Rust 最常用的异步运行时 [1]，', '其调度器持续改进 [9]。'] };
  }
  return null;
}

async function chat(req, res, body) {
  const messages = body.messages ?? [];
  const question = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  // Agent mode: with the web_search tool offered, search once, then answer citing the
  // number the tool output gave.
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const firstUser = messages.find((m) => m.role === 'user')?.content ?? '';
  // The follow-up questions under a finished answer ("相关问题").
  if (system.includes('follow-up questions') || system.includes('简短追问')) {
    const zh = /[\u4e00-\u9fff]/.test(firstUser.split('\n')[0]);
    const lines = zh
      ? ['1. Tokio 如何调度任务？', '2. Tokio 和 async-std 有什么区别？ [1]', '3. 如何在 Tokio 中设置超时？']
      : ['1. How does Tokio schedule tasks?', '2. How does Tokio compare with async-std? [1]', '3. How do I set a timeout in Tokio?'];
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: lines.join('\n') }, finish_reason: null }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    res.write('data: [DONE]\n\n');
    return res.end();
  }
  // A conversation's title: only a question that asks to be named gets one; for every
  // other the reply is empty, so the question stays the title.
  if (system.includes('写一个标题') || system.includes('Write a title')) {
    const title = firstUser.includes('起个名') ? 'Tokio 入门指南' : '';
    if (title) res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: title }, finish_reason: null }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    res.write('data: [DONE]\n\n');
    return res.end();
  }
  const step = researchStep(system, firstUser);
  if (step) {
    let closed = false;
    res.on('close', () => { closed = true; });
    await sleep(step.delay);
    if (closed) return;
    const chunks = step.chunks ?? [JSON.stringify(step.reply)];
    for (const chunk of chunks) {
      await sleep(30);
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: chunk }, finish_reason: null }] })}\n\n`);
    }
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    res.write('data: [DONE]\n\n');
    return res.end();
  }
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
  const { pace, chunks } = answerFor(question, body.model);
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
      return res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model' }, { id: 'fake-model-large' }] }));
    }
    if (url.pathname === '/pics') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ items: pictures(url.searchParams.get('q') ?? '') }));
    }
    if (url.pathname.startsWith('/pic/') && url.pathname.endsWith('.png')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      return res.end(PNG);
    }
    if (url.pathname === '/pic/evil.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' });
      return res.end('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    }
    if (url.pathname === '/favicon.ico') {
      res.writeHead(200, { 'content-type': 'image/x-icon' });
      return res.end(PNG);
    }
    if (url.pathname === '/v1/chat/completions' && req.method === 'POST') {
      let body = {};
      try { body = JSON.parse(raw); } catch { /* an empty body gets the default answer */ }
      return void chat(req, res, body);
    }
    if (url.pathname === '/a' || url.pathname === '/b') {
      const q = url.searchParams.get('q') ?? '';
      const reply = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ items: engine(url.pathname.slice(1), q) }));
      };
      // A search the chaos pass kills SearXNG in the middle of.
      if (q.includes('stalled')) return void setTimeout(reply, 2500);
      return reply();
    }
    res.writeHead(404);
    res.end('not found');
  });
});
server.listen(port, '127.0.0.1');
