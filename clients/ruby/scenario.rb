# frozen_string_literal: true

# The driver the shared client scenario (test/clients.process.test.ts) runs; not part of the
# public API. `ruby scenario.rb <track|iterate|verify|get>` with TRACKWAY_URL, TRACKWAY_API_KEY,
# PIXEL_ID (and COUNT / EVENT_ID); prints one JSON object on its last line of stdout.

$LOAD_PATH.unshift(File.expand_path("lib", __dir__))
require "json"
require "trackway"

def env(name)
  value = ENV.fetch(name, "")
  abort "scenario: #{name} is not set" if value.empty?
  value
end

def client
  # Retries enough to outlast a server that is down for ~10 s: 20 retries, steps capped at 2 s.
  Trackway::Client.new(api_key: env("TRACKWAY_API_KEY"), base_url: env("TRACKWAY_URL"),
                       max_retries: 20, retry_base_delay: 0.2, retry_max_delay: 2.0, timeout: 10.0)
end

def out(result)
  $stdout.puts JSON.generate(result)
  $stdout.flush
end

case ARGV[0]
when "track"
  c = client
  pixel_id = env("PIXEL_ID")
  count = Integer(env("COUNT"))
  results = Array.new(count) do |i|
    c.track(pixel_id: pixel_id, event_name: "Purchase", value: i, currency: "USD")
  end
  c.close
  failed = results.reject(&:ok?)
  out(ok: count - failed.size, failed: failed.size,
      errors: failed.first(5).map { |r| "#{r.status} #{r.error}: #{r.message}" })
when "iterate"
  c = client
  ids = c.events.each(env("PIXEL_ID"), limit: 100).map { |event| event["event_id"] }
  c.close
  out(count: ids.size, distinct_event_ids: ids.uniq.size)
when "verify"
  input = JSON.parse($stdin.read)
  begin
    payload = Trackway.verify_webhook(input["body"], input["headers"], input["secrets"])
    out(ok: true, event: payload["event"])
  rescue Trackway::WebhookVerificationError => e
    out(ok: false, code: e.code, message: e.message)
  end
when "get"
  c = client
  event = c.event(env("PIXEL_ID"), env("EVENT_ID"))
  c.close
  out(event_id: event["event_id"], event_name: event["event_name"])
else
  warn "usage: ruby scenario.rb track|iterate|verify|get"
  exit 2
end
