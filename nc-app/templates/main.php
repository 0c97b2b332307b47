<?php
// The chat page's mount point; the island (js/tamebi-main.mjs, built by
// web/ and copied here by nc-app/copy-web.sh) renders into it and reads the
// request token from <head data-requesttoken> (OC.requestToken).
?>
<div id="tamebi"></div>
