from spec_format.cli.app import main

main()
