import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isbot } from 'isbot';
import { BotCheck } from './bot-check.ts';

const CHROME =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

describe('BotCheck', () => {
  it('answers as isbot does, the first time and every time after', () => {
    const check = new BotCheck();
    for (let i = 0; i < 3; i++) {
      assert.equal(check.isBot(CHROME), false);
      assert.equal(check.isBot(GOOGLEBOT), true);
    }
    const long = `${GOOGLEBOT} ${'x'.repeat(600)}`;
    assert.equal(check.isBot(long), isbot(long));
    assert.equal(check.size, 2, 'agents over 512 characters are not kept');
  });

  it('keeps at most 2,000 agents however many distinct ones arrive', () => {
    const check = new BotCheck();
    for (let i = 0; i < 5_000; i++) assert.equal(check.isBot(`${CHROME} ${i}`), false);
    assert.ok(check.size <= 2_000, `${check.size} kept`);
    assert.equal(check.isBot(GOOGLEBOT), true);
  });
});
