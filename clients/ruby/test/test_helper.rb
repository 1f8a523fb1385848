# frozen_string_literal: true

require "minitest/autorun"
require "json"
require "socket"
require "zlib"
require "trackway"

# A stand-in Trackway on a real socket for the unit tests of batching and retries. It logs every
# request (body gunzipped) and answers from a plan: { "POST /v1/track/batch" => [answer, …] },
# each answer used once, in order; when a route's list is spent, it answers as the server would.
# An answer is { status:, body:, headers: }, or { slots: { 1 => 500 } } (batch: those events get
# that status, the rest 200), or { sleep: seconds } (then the default answer).
class StubServer
  Request = Struct.new(:method, :path, :query, :headers, :body, :raw, :at, keyword_init: true)

  attr_reader :url

  def initialize(plan = {}, events_total: 0)
    @plan = plan.transform_values(&:dup)
    @events_total = events_total
    @requests = []
    @lock = Mutex.new
    @server = TCPServer.new("127.0.0.1", 0)
    @url = "http://127.0.0.1:#{@server.addr[1]}"
    @threads = []
    @acceptor = Thread.new { accept_loop }
  end

  def requests
    @lock.synchronize { @requests.dup }
  end

  def batches
    requests.select { |r| r.path == "/v1/track/batch" }.map { |r| r.body["events"] }
  end

  def stop
    @acceptor.kill
    @server.close
    @threads.each(&:kill)
  end

  private

  def accept_loop
    loop do
      socket = @server.accept
      @threads << Thread.new(socket) { |s| serve(s) }
    end
  rescue IOError, Errno::EBADF
    nil
  end

  def serve(socket)
    loop do
      line = socket.gets or break
      method, target = line.split(" ")
      headers = {}
      while (header = socket.gets) && header != "\r\n"
        name, value = header.split(":", 2)
        headers[name.strip.downcase] = value.strip
      end
      raw = socket.read(headers.fetch("content-length", "0").to_i)
      raw = Zlib.gunzip(raw) if headers["content-encoding"] == "gzip"
      path, query = target.split("?", 2)
      request = Request.new(method: method, path: path, query: URI.decode_www_form(query.to_s).to_h,
                            headers: headers, raw: raw, at: Process.clock_gettime(Process::CLOCK_MONOTONIC),
                            body: raw.empty? ? nil : JSON.parse(raw))
      answer = @lock.synchronize do
        @requests << request
        @plan.fetch("#{method} #{path}", []).shift
      end
      sleep(answer[:sleep]) if answer&.key?(:sleep)
      status, body, extra = respond(request, answer)
      text = body.nil? ? "" : JSON.generate(body)
      head = ["HTTP/1.1 #{status} X", "Content-Type: application/json", "Content-Length: #{text.bytesize}",
              "Connection: keep-alive", *extra.map { |k, v| "#{k}: #{v}" }]
      socket.write("#{head.join("\r\n")}\r\n\r\n#{text}")
    end
  rescue IOError, SystemCallError
    nil
  ensure
    socket.close unless socket.closed?
  end

  def respond(request, answer)
    return [answer[:status], answer[:body], answer.fetch(:headers, {})] if answer&.key?(:status)

    key = "#{request.method} #{request.path}"
    if key == "POST /v1/track/batch"
      slots = answer&.fetch(:slots, {}) || {}
      results = request.body["events"].each_with_index.map do |event, index|
        status = slots.fetch(index, 200)
        if status == 200
          { index: index, status: 200, success: true, event_id: event["event_id"], message: "Event tracked" }
        else
          { index: index, status: status, error: status >= 500 ? "Internal error" : "Invalid request",
            message: "slot #{index} refused", field: "value" }
        end
      end
      [200, { accepted: results.size, deduplicated: 0, rejected: 0, results: results }, {}]
    elsif request.method == "GET" && (match = %r{\A/v1/pixels/([^/]+)/events\z}.match(request.path))
      limit = [100, request.query.fetch("limit", "50").to_i].min
      offset = request.query.fetch("offset", "0").to_i
      events = (offset...[@events_total, offset + limit].min).map do |i|
        { event_id: "e#{i}", pixel_id: match[1], event_name: "Purchase" }
      end
      [200, { events: events, total: @events_total, limit: limit, offset: offset }, {}]
    elsif key == "POST /v1/pixels"
      [201, { id: "px_new", name: request.body["name"] }, {}]
    else
      [404, { error: "Not found", message: "Not found: #{request.path}" }, {}]
    end
  end
end

# A port nothing listens on right now.
def free_port
  server = TCPServer.new("127.0.0.1", 0)
  server.addr[1]
ensure
  server&.close
end
