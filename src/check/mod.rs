//! `mcpcassette check`: findings about cassette files.
