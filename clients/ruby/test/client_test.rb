# frozen_string_literal: true

require "test_helper"

# Batching and retries against a stand-in server on a real socket (test/test_helper.rb).
class ClientTest < Minitest::Test
  UUID_V7 = /\Aevt_\h{8}-\h{4}-7\h{3}-[89ab]\h{3}-\h{12}\z/.freeze

  def teardown
    @client&.close
    @server&.stop
  end

  def serve(plan = {}, events_total = 0)
    @server = StubServer.new(plan, events_total: events_total)
  end

  # Small delays, so the retry tests run in well under a second each.
  def client(url = @server.url, **options)
    @client = Trackway::Client.new(api_key: "tw_live_test", base_url: url, retry_base_delay: 0.02,
                                   retry_max_delay: 0.1, **options)
  end

  def purchase(value)
    { pixel_id: "px_1", event_name: "Purchase", value: value, currency: "USD" }
  end

  def wait_for(seconds = 2)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
    sleep 0.01 until yield || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
  end

  def test_full_batches_go_at_once_the_rest_on_flush_gzipped_with_an_event_id_each
    serve
    c = client(flush_interval: 60)
    results = 250.times.map { |i| c.track(purchase(i)) }
    # Wait for the answers, not for the server to have seen the requests: until the worker has
    # read the second answer and let go of that batch, it is still in flight and flush would
    # return it too (its results settle just before the worker lets go of it).
    wait_for(10) { results.first(200).none?(&:pending?) && c.pending_events == 50 }
    assert_equal 2, @server.requests.size, "the two full batches, without waiting"
    assert results.last.pending?
    assert_nil results.last.status
    flushed = c.flush
    assert_equal results.last(50), flushed
    assert_equal 3, @server.requests.size
    @server.requests.each do |request|
      assert_equal "gzip", request.headers["content-encoding"]
      assert_equal "Bearer tw_live_test", request.headers["authorization"]
      assert_equal "application/json", request.headers["content-type"]
    end
    sent = @server.batches.flatten
    assert_equal (0...250).to_a, sent.map { |e| e["value"] }
    ids = sent.map { |e| e["event_id"] }
    assert_equal 250, ids.uniq.size
    ids.each { |id| assert_match UUID_V7, id }
    assert_equal results.map(&:event_id), ids
    assert(results.all? { |r| r.ok? && r.status == 200 && r.message == "Event tracked" })
  end

  def test_a_caller_event_id_is_kept_and_gzip_can_be_turned_off
    serve
    result = client(gzip: false).track(purchase(1).merge("event_id" => "order-1"))
    @client.close
    assert_equal "order-1", result.event_id
    assert_nil @server.requests.first.headers["content-encoding"]
    assert_equal "order-1", @server.batches.first.first["event_id"]
  end

  def test_the_time_bound_sends_a_partial_batch_after_flush_interval
    serve
    c = client(flush_interval: 0.2)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    result = c.track(purchase(1))
    wait_for(5) { !result.pending? }
    assert result.ok?, "sent by the background thread without flush"
    # Not before the interval: measured on the request, not sampled after a sleep (a loaded
    # machine can oversleep past the interval). Same clock: the stand-in runs in this process.
    assert_operator @server.requests.first.at - started, :>=, 0.2
  end

  def test_a_429_is_waited_out_for_retry_after_then_the_same_events_are_resent
    serve("POST /v1/track/batch" => [{ status: 429, headers: { "Retry-After" => "1" },
                                       body: { error: "Rate limit exceeded", message: "Too many requests", retry_after: 1 } }])
    result = client.track(purchase(1))
    @client.flush
    first, second = @server.requests
    assert_operator second.at - first.at, :>=, 1.0
    assert_equal first.body, second.body
    assert result.ok?
  end

  def test_a_429_asking_for_longer_than_max_retry_wait_is_reported_not_slept_on
    serve("POST /v1/track/batch" => [{ status: 429, body: { error: "Rate limit exceeded", message: "Daily limit", retry_after: 3600 } }])
    result = client.track(purchase(1))
    started = Time.now
    @client.flush
    # Not slept on: far below the 3,600 s asked (and max_retry_wait's 60 s), with room for a
    # loaded machine's slow round trip.
    assert_operator Time.now - started, :<, 10
    assert_equal [429, "Rate limit exceeded", "Daily limit"], [result.status, result.error, result.message]
  end

  def test_5xx_answers_are_retried_with_the_same_event_ids
    serve("POST /v1/track/batch" => [{ status: 503, body: { error: "Service unavailable", message: "x" } },
                                     { status: 500, body: nil }])
    result = client.track(purchase(1))
    @client.close
    batches = @server.batches
    assert_equal 3, batches.size
    assert_equal batches.first, batches.last
    assert result.ok?
  end

  def test_a_lost_answer_is_resent_with_the_same_ids
    serve("POST /v1/track/batch" => [{ sleep: 1.0 }])
    result = client(timeout: 0.3).track(purchase(1))
    @client.close
    batches = @server.batches
    assert_equal 2, batches.size
    assert_equal batches[0], batches[1]
    assert result.ok?
  end

  def test_another_4xx_is_never_retried_and_each_event_carries_it
    serve("POST /v1/track/batch" => [{ status: 401, body: { error: "Unauthorized", message: "Invalid API key" } }])
    seen = Queue.new
    c = client(on_result: ->(result, event) { seen << [result.status, event[:value]] })
    results = [c.track(purchase(1)), c.track(purchase(2))]
    c.close
    assert_equal 1, @server.requests.size
    results.each do |result|
      refute result.ok?
      assert_equal [401, "Unauthorized", "Invalid API key"], [result.status, result.error, result.message]
    end
    assert_equal [[401, 1], [401, 2]], Array.new(seen.size) { seen.pop }
  end

  def test_a_refused_slot_settles_with_its_answer_and_a_500_slot_alone_is_resent
    serve("POST /v1/track/batch" => [{ slots: { 1 => 400, 2 => 500 } }])
    c = client
    results = 3.times.map { |i| c.track(purchase(i)) }
    c.close
    assert_equal [results[2].event_id], @server.batches[1].map { |e| e["event_id"] }
    assert results[0].ok? && results[2].ok?
    assert_equal [400, "value", "slot 1 refused"], [results[1].status, results[1].field, results[1].message]
  end

  def test_a_413_splits_the_batch_in_halves
    serve("POST /v1/track/batch" => [{ status: 413, body: { error: "Payload too large", message: "too big" } }])
    c = client
    5.times { |i| c.track(purchase(i)) }
    results = c.close
    assert_equal [5, 3, 2], @server.batches.map(&:size)
    assert results.all?(&:ok?)
  end

  def test_no_server_settles_events_as_network_errors_after_the_retries
    c = client("http://127.0.0.1:#{free_port}", max_retries: 2)
    result = c.track(purchase(1))
    c.close
    assert_equal [0, "Network error"], [result.status, result.error]
    assert_match(/refused/i, result.message)
    assert_raises(Trackway::Error) { c.track(purchase(2)) }
    assert_raises(Trackway::NetworkError) { c.pixels.list }
  end

  def test_errors_carry_status_error_message_and_field_get_is_retried_create_is_not
    serve("GET /v1/pixels/px_gone" => [{ status: 502, body: nil }],
          "POST /v1/pixels" => [{ status: 500, body: { error: "Internal error", message: "boom" } }],
          "POST /v1/track/validate" => [{ status: 400, body: { error: "Invalid request", field: "event_name",
                                                                 message: "Missing required field: event_name" } }])
    c = client
    error = assert_raises(Trackway::APIError) { c.pixels.get("px_gone") }
    assert_equal [404, "Not found", "Not found: /v1/pixels/px_gone", nil], [error.status, error.error, error.message, error.field]
    error = assert_raises(Trackway::APIError) { c.pixels.create(name: "Shop", domain: "shop.example.com") }
    assert_equal 500, error.status
    error = assert_raises(Trackway::APIError) { c.validate(pixel_id: "px_1") }
    assert_equal [400, "Invalid request", "event_name"], [error.status, error.error, error.field]
    assert_equal ["GET /v1/pixels/px_gone", "GET /v1/pixels/px_gone", "POST /v1/pixels", "POST /v1/track/validate"],
                 @server.requests.map { |r| "#{r.method} #{r.path}" }
    assert_equal "px_new", c.pixels.create(name: "Shop", domain: "shop.example.com")["id"]
  end

  def test_iterate_walks_every_page_once
    serve({}, 230)
    ids = client.events.each("px_1", limit: 100).map { |event| event["event_id"] }
    assert_equal 230, ids.uniq.size
    assert_equal 230, ids.size
    assert_equal %w[0 100 200], @server.requests.map { |r| r.query["offset"] }
  end

  def test_events_still_queued_at_exit_are_sent
    serve
    lib = File.expand_path("../lib", __dir__)
    script = "require 'trackway'; c = Trackway::Client.new(api_key: 'tw_live_x', base_url: '#{@server.url}', " \
             "flush_interval: 60); c.track(pixel_id: 'px_1', event_name: 'Lead'); puts 'tracked'"
    output = IO.popen(["ruby", "-I", lib, "-e", script], &:read)
    assert_equal ["tracked\n", true], [output, $?.success?]
    assert_equal 1, @server.batches.size
  end

  def test_event_ids_are_uuid_v7_and_time_ordered
    ids = Array.new(3) { Trackway::Client.new_event_id.tap { sleep 0.002 } }
    ids.each { |id| assert_match UUID_V7, id }
    assert_equal ids.sort, ids
  end

  def test_tracking_from_many_threads_loses_nothing
    serve
    c = client(max_batch_size: 50)
    results = Queue.new
    4.times.map { |t| Thread.new { 100.times { |i| results << c.track(purchase((t * 100) + i)) } } }.each(&:join)
    c.close
    assert_equal 400, @server.batches.flatten.map { |e| e["value"] }.uniq.size
    assert(Array.new(results.size) { results.pop }.all?(&:ok?))
  end

  def test_a_nil_event_id_is_replaced_not_sent_twice
    serve
    client(gzip: false).track(purchase(1).merge("event_id" => nil))
    @client.close
    assert_equal 1, @server.requests.first.raw.scan("event_id").size
    assert_match UUID_V7, @server.batches.first.first["event_id"]
  end

  def test_a_forked_child_sends_only_its_own_events
    serve
    c = client(flush_interval: 60)
    c.track(purchase(0))
    c.flush # the parent's connection is open now
    c.track(purchase(1))
    pid = fork do
      c.track(purchase(2))
      exit!(c.flush.map(&:ok?) == [true] ? 0 : 1)
    end
    Process.wait(pid)
    assert_predicate $?, :success?
    c.close
    assert_equal [[0], [2], [1]], @server.batches.map { |events| events.map { |e| e["value"] } }
  end
end
