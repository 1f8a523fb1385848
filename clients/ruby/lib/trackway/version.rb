# frozen_string_literal: true

module Trackway
  VERSION = "0.1.0"
end
