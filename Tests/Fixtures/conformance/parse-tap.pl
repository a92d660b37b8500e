#!/usr/bin/env perl
# Parses TAP from stdin with TAP::Parser (Perl's Test::Harness, the parser behind `prove`) and
# prints one line: "tests=N passed=N failed=N skipped=N todo=N version=N parse_errors=N",
# then each parse error. Exit status 0 when the stream parsed without errors, else 1.
use strict;
use warnings;
use TAP::Parser;

my $tap = do { local $/; <STDIN> };
my $parser = TAP::Parser->new({ tap => $tap });
while (my $result = $parser->next) { }
my @errors = $parser->parse_errors;
printf "tests=%d passed=%d failed=%d skipped=%d todo=%d version=%d parse_errors=%d\n",
    $parser->tests_run, scalar($parser->passed), scalar($parser->failed), scalar($parser->skipped),
    scalar($parser->todo), $parser->version, scalar(@errors);
print "error: $_\n" for @errors;
exit(@errors ? 1 : 0);
