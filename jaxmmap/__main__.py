from jaxmmap.cli import main

raise SystemExit(main())
