import { prepareEvent } from '../src/domain/events/track-event.ts';
import { purchaseTemplate } from './lib.ts';
const plain = JSON.parse(purchaseTemplate('px_bench'));
const keyed = { ...plain, action_source: 'website', user_data: { ...plain.user_data, client_ip_address: '203.0.113.7', client_user_agent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15', fbc: 'fb.1.1732473730000.IwAR2xYzAbCdEfGh', fbp: 'fb.1.1732473730000.1098115397' } };
const now = new Date(Date.parse(plain.timestamp) + 1000);
const body = process.env.KEYED ? keyed : plain;
for (let i = 0; i < 200000; i++) prepareEvent('acct', body, now);
